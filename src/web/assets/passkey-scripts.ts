import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type VersionedAsset, versioned, versionedAsset } from './stylesheet.js';

export const WEBAUTHN_BUNDLE_PATH = '/assets/webauthn-browser.js';
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';

let bundle: VersionedAsset | undefined;

/**
 * @simplewebauthn/browser's UMD bundle (it defines `SimpleWebAuthnBrowser`), served from this
 * origin, so the CSP's `script-src 'self'` admits it: no third-party script host.
 */
export function webauthnBundle(): VersionedAsset {
  if (!bundle) {
    const require = createRequire(import.meta.url);
    // The package exports only its modules; the bundle sits beside them (its `unpkg` file).
    const main = require.resolve('@simplewebauthn/browser');
    const file = path.join(path.dirname(main), '..', 'dist', 'bundle', 'index.umd.min.js');
    const body = readFileSync(file);
    bundle = versionedAsset(WEBAUTHN_BUNDLE_PATH, body);
  }
  return bundle;
}

/** public/passkeys.js: the passkey buttons and autofill of the sign-in and security pages. */
export const passkeyScript = versioned('passkeys.js', PASSKEY_SCRIPT_PATH);

/** The scripts a page with passkey buttons loads, in order (the bundle first). */
export function passkeyScriptHrefs(): string[] {
  return [webauthnBundle().href, passkeyScript().href];
}
