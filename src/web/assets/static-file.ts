import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/paths.js';

/** A file of public/, read once, with the strong validator of its content. */
export interface StaticFile {
  body: Buffer;
  /** A short SHA-256 of the content: the ETag, and the version in a versioned URL. */
  version: string;
  etag: string;
}

/**
 * Reads public/<name>. A missing file fails loudly at startup (the server registers the routes at
 * boot) rather than answering 404 later.
 */
export function readStaticFile(name: string): StaticFile {
  const body = readFileSync(path.join(projectRoot, 'public', name));
  const version = contentVersion(body);
  return { body, version, etag: `"${version}"` };
}

/** A short SHA-256 of an asset's content: its ETag and the version in its URL. */
export function contentVersion(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 12);
}
