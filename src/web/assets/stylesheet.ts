import { readStaticFile } from './static-file.js';

/** The one stylesheet of the pages, served by the service itself (no external resources). */
export interface Stylesheet {
  /** The route that serves it. */
  path: string;
  /** What pages link to: the route plus a content version, so it can be cached for a year. */
  href: string;
  body: Buffer;
  etag: string;
}

export const STYLESHEET_PATH = '/assets/styles.css';

let loaded: Stylesheet | undefined;

/** public/styles.css, read once. */
export function stylesheet(): Stylesheet {
  if (!loaded) {
    const { body, version, etag } = readStaticFile('styles.css');
    loaded = { path: STYLESHEET_PATH, href: `${STYLESHEET_PATH}?v=${version}`, body, etag };
  }
  return loaded;
}
