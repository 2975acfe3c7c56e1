#!/usr/bin/env node
// `npm start` runs this first (package.json "prestart"): it compiles the sources to dist/ when dist/
// is missing or older than them, so that the server starts from the compiled build (bin/launch.js).
// A checkout without the compiler (production dependencies only) or a failed build keeps running
// the sources through tsx, as before.
import './node-version.js'; // `npm start` on an unsupported Node.js stops here, before compiling
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from './launch.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');

if (existsSync(path.join(root, 'src')) && !buildIsCurrent('main') && existsSync(tsc)) {
  console.error(
    'idp: compiling the sources to dist/ (once after each change; `npm run build` does the same)',
  );
  try {
    execFileSync(tsc, ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  } catch {
    console.error('idp: the build failed; starting from the sources instead');
  }
}
