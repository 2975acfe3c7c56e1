import { readStaticFile } from './static-file.js';

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

export function versioned(file: string, routePath: string): () => VersionedAsset {
  let loaded: VersionedAsset | undefined;
  return () => {
    if (!loaded) {
      const { body, version, etag } = readStaticFile(file);
      loaded = { path: routePath, href: `${routePath}?v=${version}`, body, etag };
    }
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
