/*
 * The show-password toggle: a button after every password field that shows or hides what was
 * typed. Progressive: without this script the forms are plain forms and work the same. The
 * button's texts are the page's own, rendered by the server into <body data-show-password
 * data-hide-password>, so the script carries no language of its own. Served from the service's
 * origin: the pages' CSP is `script-src 'self'`, without inline script.
 */
(() => {
  const texts = document.body.dataset;
  const show = texts.showPassword || 'Show';
  const hide = texts.hidePassword || 'Hide';

  for (const input of document.querySelectorAll('input[type="password"]')) {
    const button = document.createElement('button');
    // Never a submit button: pressing it must not send the form.
    button.type = 'button';
    button.className = 'button password-toggle';
    if (input.id) button.setAttribute('aria-controls', input.id);
    // The state is said by the text (Show/Hide), not also by aria-pressed ("Hide, pressed" would
    // say it twice, and contradict itself). The name also says which field, as a form may have
    // three: it starts with the visible text (WCAG 2.5.3, label in name).
    const field = input.labels?.[0]?.textContent?.trim();
    const setRevealed = (reveal) => {
      input.type = reveal ? 'text' : 'password';
      button.textContent = reveal ? hide : show;
      if (field) button.setAttribute('aria-label', `${button.textContent}: ${field}`);
    };
    setRevealed(false);
    button.addEventListener('click', () => setRevealed(input.type === 'password'));
    // Hidden again on submit, so the browser never keeps the password as a text field's entry.
    input.form?.addEventListener('submit', () => setRevealed(false));

    // The field and its button side by side; the field keeps its place in the form.
    const row = document.createElement('div');
    row.className = 'password-field';
    input.before(row);
    row.append(input, button);
  }
})();
