import { contentVersion, readStaticFile } from './static-file.js';

/**
 * A file of public/ that the pages reference by a versioned URL (`<path>?v=<content hash>`), so it
 * can be cached for a year: a changed file gets a new URL.
 */
export interface VersionedAsset {
  /** The route that serves it. */
  path: string;
  /** What pages link to: the route plus a content version. */
  href: string;
  body: Buffer;
  etag: string;
}

/** The asset `body` served at `routePath`, linked and validated by its content's version. */
export function versionedAsset(routePath: string, body: Buffer): VersionedAsset {
  const version = contentVersion(body);
  return { path: routePath, href: `${routePath}?v=${version}`, body, etag: `"${version}"` };
}

/** public/<file> as a versioned asset, read when first asked for. */
export function versioned(file: string, routePath: string): () => VersionedAsset {
  let loaded: VersionedAsset | undefined;
  return () => {
    loaded ??= versionedAsset(routePath, readStaticFile(file).body);
    return loaded;
  };
}

export const STYLESHEET_PATH = '/assets/styles.css';
export const PAGE_SCRIPT_PATH = '/assets/show-password.js';

/** The one stylesheet of the pages (public/styles.css), served by the service itself. */
export const stylesheet = versioned('styles.css', STYLESHEET_PATH);

/**
 * The pages' one script (public/show-password.js): the show-password toggle. The forms work without
 * it; it is served from this origin, so the CSP's `script-src 'self'` admits it and nothing else.
 */
export const pageScript = versioned('show-password.js', PAGE_SCRIPT_PATH);

export const RECOVERY_CODES_SCRIPT_PATH = '/assets/recovery-codes.js';

/**
 * public/recovery-codes.js: the copy button of the recovery codes just shown (the security page
 * only). Their download link and "I saved them" step work without it.
 */
export const recoveryCodesScript = versioned('recovery-codes.js', RECOVERY_CODES_SCRIPT_PATH);
