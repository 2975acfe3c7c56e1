/*
 * Passkeys (WebAuthn Level 3) on the sign-in page, the second step of a sign-in and
 * the security page. It drives @simplewebauthn/browser (served before it, from this origin) and the
 * service's JSON endpoints: ask for a ceremony's options, hand them to the browser, send back what
 * the authenticator answered. The texts are the page's own, in its data attributes; the parts are
 * hidden until this script finds the browser able to use passkeys, so a page without it shows
 * nothing that does not work.
 */
(() => {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn) return;

  const postJson = async (url, body) => {
    try {
      const response = await fetch(url, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
      const data = await response.json().catch(() => ({}));
      // A 429 says when to try again (RFC 9110 §10.2.3): its seconds are shown, not a vague failure.
      const retryAfter = Number(response.headers.get('retry-after')) || undefined;
      return { ok: response.ok, data, retryAfter };
    } catch {
      return { ok: false, data: {} };
    }
  };

  /** The message element of a part: `text` shown, or hidden when there is none. */
  const say = (part, text) => {
    const message = part.querySelector('[data-passkey-message]');
    if (!message) return;
    message.textContent = text || '';
    message.hidden = !text;
  };

  /** The endpoints' error codes, by the names of the page's texts (data-errors). */
  const TEXT_OF_CODE = {
    ceremony_expired: 'expired',
    passkey_invalid: 'invalid',
    passkey_exists: 'exists',
    passkey_refused: 'refused',
    account_disabled: 'closed',
  };

  /** The text of `code`; for `rate_limited`, "wait N seconds" in the page language's plural form. */
  const errorText = (part, code, retryAfter) => {
    let texts = {};
    try {
      texts = JSON.parse(part.dataset.errors || '{}');
    } catch {}
    if (code === 'rate_limited' && retryAfter && texts.wait) {
      let form = 'other';
      try {
        form = new Intl.PluralRules(document.documentElement.lang || undefined).select(retryAfter);
      } catch {}
      return (texts.wait[form] || texts.wait.other || '').replace('{n}', String(retryAfter));
    }
    const text = texts[TEXT_OF_CODE[code] || code];
    return typeof text === 'string' ? text : texts.failed || '';
  };

  /** A refusal of the browser's own (the person closed the dialog, or another request took over). */
  const cancelled = (error) =>
    error &&
    (error.name === 'NotAllowedError' ||
      error.name === 'AbortError' ||
      error.code === 'ERROR_CEREMONY_ABORTED');

  // Sign-in with a passkey: the button, and where the page allows it, the username field's autofill.
  const signIn = document.querySelector('[data-passkey-signin]');
  if (signIn && webauthn.browserSupportsWebAuthn()) {
    signIn.hidden = false;
    const button = signIn.querySelector('[data-passkey-button]');
    // Where the ceremony's two requests go: the sign-in's, unless the part names its own (the console's entry).
    const optionsUrl = signIn.dataset.optionsUrl || '/signin/passkey/options';
    const verifyUrl = signIn.dataset.verifyUrl || '/signin/passkey/verify';
    const flow = {
      request: signIn.dataset.request || undefined,
      return_to: signIn.dataset.returnTo || undefined,
    };
    // The part's own CSRF field, or on the sign-in page the password form's.
    const csrf = (
      signIn.querySelector('input[name="csrf_token"]') ?? document.querySelector('input[name="csrf_token"]')
    )?.value;
    let autofill = false;
    // While the button's request runs, the autofill request is not started again: a new one would
    // abort the button's (the library allows one ceremony at a time) and take its cookie.
    let busy = false;
    // Once a form is sent the page is on its way out: its CSRF token may no longer match the
    // session the answer sets, so no new ceremony starts.
    let leaving = false;
    document.addEventListener('submit', () => {
      leaving = true;
    });
    window.addEventListener('pagehide', () => {
      leaving = true;
    });

    /** 'done': signed in; 'again': the person may try again; 'stop': the service refused to start. */
    const run = async (conditional) => {
      const started = await postJson(optionsUrl, { csrf_token: csrf });
      if (!started.ok) {
        if (!conditional) say(signIn, errorText(signIn, started.data.error, started.retryAfter));
        return 'stop';
      }
      let response;
      try {
        response = await webauthn.startAuthentication({
          optionsJSON: started.data.options,
          useBrowserAutofill: conditional,
        });
      } catch (error) {
        if (!conditional) say(signIn, errorText(signIn, cancelled(error) ? 'cancelled' : 'failed'));
        return 'again';
      }
      say(signIn, signIn.dataset.working);
      const finished = await postJson(verifyUrl, { csrf_token: csrf, response, ...flow });
      if (finished.ok && finished.data.redirect) {
        window.location.assign(finished.data.redirect);
        return 'done';
      }
      say(signIn, errorText(signIn, finished.data.error, finished.retryAfter));
      // Past the limit, the autofill's request waits until the service takes requests again.
      return finished.data.error === 'rate_limited' ? 'stop' : 'again';
    };

    // Conditional mediation (WebAuthn §5.1.4.1): the browser offers the passkeys in the username
    // field's suggestions; a new request waits again after one that did not sign in.
    const listen = async () => {
      if (!autofill || busy || leaving) return;
      const outcome = await run(true);
      if (outcome === 'again' && !busy && !leaving) window.setTimeout(listen, 1000);
    };

    button?.addEventListener('click', async () => {
      busy = true;
      button.disabled = true;
      const outcome = await run(false);
      busy = false;
      button.disabled = false;
      if (outcome !== 'done') listen();
    });

    if ('autofill' in signIn.dataset && document.querySelector('input[autocomplete~="webauthn"]')) {
      webauthn.browserSupportsWebAuthnAutofill().then((supported) => {
        autofill = supported;
        listen();
      });
    }
  }

  // Registering a passkey on the security page.
  const register = document.querySelector('[data-passkey-register]');
  if (register) {
    const button = register.querySelector('[data-passkey-add]');
    const controls = register.querySelector('[data-passkey-controls]');
    if (!webauthn.browserSupportsWebAuthn()) {
      say(register, register.dataset.unsupported);
    } else if (button) {
      button.hidden = false;
      if (controls) controls.hidden = false;
      const csrf = register.querySelector('input[name="csrf_token"]')?.value;
      button.addEventListener('click', async () => {
        button.disabled = true;
        say(register, register.dataset.working);
        let retryAfter;
        const done = await (async () => {
          const started = await postJson('/account/passkeys/options', { csrf_token: csrf });
          retryAfter = started.retryAfter;
          if (!started.ok) return started.data.error;
          let response;
          try {
            response = await webauthn.startRegistration({ optionsJSON: started.data.options });
          } catch (error) {
            return error && error.name === 'InvalidStateError'
              ? 'passkey_exists'
              : cancelled(error)
                ? 'cancelled'
                : 'failed';
          }
          const name = register.querySelector('#passkey-new-name')?.value.trim() || '';
          const finished = await postJson('/account/passkeys/verify', { csrf_token: csrf, response, name });
          retryAfter = finished.retryAfter;
          return finished.ok ? null : finished.data.error;
        })();
        if (done === null) {
          const url = new URL(window.location.href);
          url.searchParams.set('notice', 'passkey_added');
          window.location.assign(url.pathname + url.search);
          return;
        }
        say(register, errorText(register, done, retryAfter));
        button.disabled = false;
      });
    }
  }
})();
