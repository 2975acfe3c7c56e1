import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/paths.js';

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

/**
 * public/styles.css, read once. A missing file fails loudly at startup (the server registers the
 * route at boot) rather than serving unstyled pages.
 */
export function stylesheet(): Stylesheet {
  if (!loaded) {
    const body = readFileSync(path.join(projectRoot, 'public', 'styles.css'));
    const version = createHash('sha256').update(body).digest('base64url').slice(0, 12);
    loaded = { path: STYLESHEET_PATH, href: `${STYLESHEET_PATH}?v=${version}`, body, etag: `"${version}"` };
  }
  return loaded;
}
