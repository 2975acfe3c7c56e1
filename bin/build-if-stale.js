#!/usr/bin/env node
// Compiles the sources to dist/ when dist/ is missing or older than them, so that the server and
// the CLI start from the compiled build (bin/launch.js). `npm ci` runs it (package.json "prepare"),
// so that the first `npm start` starts at once; `npm start` runs it again first ("prestart") and
// compiles only after a change. It says what it does and how long it took: some seconds of tsc
// (docs/performance.md "Start-up"). Without the compiler (`npm ci --omit=dev`) or without the
// sources (the image's dependency stage) it does nothing; a failed build leaves the sources to tsx.
import './node-version.js'; // `npm start` on an unsupported Node.js stops here, before compiling
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from './launch.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
/** How long the last build here took, for the next one's first line. */
const record = path.join(root, 'dist', '.build-seconds');

const seconds = (ms) => (ms / 1000).toFixed(1);

if (existsSync(path.join(root, 'src')) && !buildIsCurrent('main') && existsSync(tsc)) {
  const last = Number(existsSync(record) ? readFileSync(record, 'utf8') : Number.NaN);
  const expected = Number.isFinite(last) ? `took ${last.toFixed(1)} s last time` : 'some seconds';
  console.error(
    `idp: compiling the sources to dist/ with tsc (${expected}; once after each change, \`npm run build\` does the same)`,
  );
  const started = performance.now();
  // On a terminal, the seconds go by on one line; a log gets the first and the last line alone.
  const ticker = process.stderr.isTTY
    ? setInterval(
        () => process.stderr.write(`\ridp: compiling… ${seconds(performance.now() - started)} s`),
        1000,
      )
    : undefined;
  const code = await new Promise((resolve) => {
    const child = spawn(tsc, ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    child.once('error', () => resolve(1));
    child.once('exit', (status) => resolve(status ?? 1));
  });
  clearInterval(ticker);
  if (ticker) process.stderr.write('\r\x1b[K');
  const took = performance.now() - started;
  if (code === 0) {
    writeFileSync(record, seconds(took));
    console.error(`idp: compiled in ${seconds(took)} s`);
  } else {
    console.error(`idp: the build failed after ${seconds(took)} s; the sources will run through tsx instead`);
  }
}
