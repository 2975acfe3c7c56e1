/*
 * The copy button of the recovery codes the security page shows once (views/security.ejs). The
 * codes are stored only as hashes, so the page is their one copy: the button puts the same text
 * as the page's download link (a data: URL the server wrote, which works without this script)
 * on the clipboard, and says whether it worked in the page's own words (data-copied,
 * data-copy-failed). Served from the service's origin: the pages' CSP is `script-src 'self'`.
 */
(() => {
  const section = document.querySelector('[data-recovery-codes]');
  const button = section?.querySelector('[data-copy-codes]');
  const download = section?.querySelector('[data-download-codes]');
  const status = section?.querySelector('[data-copy-status]');
  if (!section || !button || !download || !status) return;
  const href = download.getAttribute('href') || '';
  const text = decodeURIComponent(href.slice(href.indexOf(',') + 1));

  /** Without the Clipboard API (a page not on https nor localhost): the selection, copied. */
  const copyBySelection = () => {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    area.remove();
    return copied;
  };

  const say = (message) => {
    status.textContent = message;
    status.hidden = false;
  };

  button.addEventListener('click', async () => {
    let copied = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        copied = true;
      } else {
        copied = copyBySelection();
      }
    } catch {
      copied = copyBySelection();
    }
    say(copied ? section.dataset.copied : section.dataset.copyFailed);
    button.focus();
  });
  button.hidden = false;
})();
