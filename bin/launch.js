import { readdirSync, statSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The V8 flags the server runs with (`npm start`, the image's CMD and the benchmark pass them;
 * test/bin/launch.test.ts and test/docker.test.ts hold them to it); docs/performance.md "Memory".
 * - 16 MB semi-spaces (V8's own default): Node.js 24 sizes the young generation from the
 *   machine's memory, and on a 24 GB machine it grew by some 110 MB under load.
 * - A 512 MB old generation: V8 lets the old generation grow to four times what survives a
 *   collection when its limit is the default 4 GB, and 1.4 times with this one. The server's
 *   live heap is about 40 MB (its caches are bounded: at most some 50 MB of tokens).
 * - `gc` exposed, for the one collection after start-up (src/main.ts).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=512', '--expose-gc'];

/**
 * The environment the server starts with, beside its flags (`npm start`, the image's ENV, the
 * benchmark). glibc serves a block under its mmap threshold from its heaps and keeps it when it is
 * freed, and raises that threshold to the size of each mapped block freed (up to 32 MB): after the
 * first sign-ins, argon2id's 19 MiB blocks came from per-thread heaps that kept them, about 95 MiB
 * of resident memory for good. A fixed 1 MiB threshold maps and unmaps each one (a few ms of page
 * faults per hash; docs/performance.md "Memory").
 */
export const SERVER_ENV = { MALLOC_MMAP_THRESHOLD_: '1048576' };

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What the compiled build is made of (tsconfig.build.json): a change to any of them makes it stale. */
const BUILD_INPUTS = ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time among `file` and, for a folder, everything in it (its own entries too: a deletion). */
function newestChange(file) {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(file, { recursive: true })) {
    newest = Math.max(newest, statSync(path.join(file, String(entry))).mtimeMs);
  }
  return newest;
}

/**
 * Whether dist/ holds a build of the sources as they are: its `entry` was written after the last
 * change to any of its inputs (tsc writes every output file on each build).
 * @param {string} entry path below src/ without extension, e.g. "main" or "cli/main"
 * @param {string} base the checkout (this one unless a test says otherwise)
 */
export function buildIsCurrent(entry = 'main', base = root) {
  const built = statSync(path.join(base, 'dist', 'src', `${entry}.js`), { throwIfNoEntry: false });
  if (!built) return false;
  return BUILD_INPUTS.every((input) => newestChange(path.join(base, input)) <= built.mtimeMs);
}

/**
 * Starts an entry point of the service: the compiled JavaScript in dist/ when it is a build of the
 * sources as they are (a built image ships dist/ and no src/; a checkout has it after `npm run
 * build`, which `npm start` runs first when the sources changed), otherwise the TypeScript sources
 * through tsx. Loading the compiled modules is much faster than transpiling them through tsx's
 * loader at every start: see docs/performance.md "Start-up".
 * IDP_RUN_BUILD=1 runs dist/ whatever its age (the test suite builds it once and starts its many
 * child processes from it); IDP_RUN_BUILD=0 runs the sources even when dist/ is current.
 * @param {string} entry path below src/ without extension, e.g. "main" or "cli/main"
 */
export async function launch(entry) {
  // V8's compiled code of every module is kept on disk (in the OS's temporary directory) and reused
  // by the next start (Node.js 22.1 and later). Each entry point has its own cache: V8 refuses code
  // cached under other flags, and the CLI sets its own (bin/idp.js), so with one cache a command
  // after a server's start (and a start after a command) compiled every module again.
  module.enableCompileCache?.(path.join(os.tmpdir(), 'node-compile-cache', `idp-${entry.replace('/', '-')}`));
  const source = path.join(root, 'src', `${entry}.ts`);
  const compiled = pathToFileURL(path.join(root, 'dist', 'src', `${entry}.js`)).href;
  const mode = process.env.IDP_RUN_BUILD;
  if (mode === '1' || statSync(source, { throwIfNoEntry: false }) === undefined) return import(compiled);
  if (mode !== '0' && buildIsCurrent(entry)) return import(compiled);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(source).href);
}
