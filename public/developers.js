/*
 * The copy buttons of the values the developer portal shows once (views/developers/_copy.ejs): a
 * new client secret or registration token is stored only as a hash, so the page is its one copy.
 * The value sits in a read-only field that can be selected and copied without this script; the
 * button puts it on the clipboard and says whether it worked in the page's own words
 * (data-copied, data-copy-failed), as the recovery codes' button does. Served from the service's
 * origin: the pages' CSP is `script-src 'self'`.
 */
(() => {
  for (const box of document.querySelectorAll('[data-copy]')) {
    const field = box.querySelector('input');
    const button = box.querySelector('[data-copy-button]');
    const status = box.querySelector('[data-copy-status]');
    if (!field || !button || !status) continue;

    /** Without the Clipboard API (a page not on https nor localhost): the selection, copied. */
    const copyBySelection = () => {
      field.focus();
      field.select();
      try {
        return document.execCommand('copy');
      } catch {
        return false;
      }
    };

    button.addEventListener('click', async () => {
      let copied = false;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(field.value);
          copied = true;
        } else {
          copied = copyBySelection();
        }
      } catch {
        copied = copyBySelection();
      }
      status.textContent = copied ? box.dataset.copied : box.dataset.copyFailed;
      button.focus();
    });
    button.hidden = false;
  }
})();
