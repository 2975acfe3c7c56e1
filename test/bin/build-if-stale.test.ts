import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { buildIsCurrent } from '../../bin/launch.js';
import { projectRoot } from '../../src/lib/paths.js';

/*
 * bin/build-if-stale.js compiles the sources when dist/ is stale: during `npm ci` (package.json
 * "prepare"), so that the first `npm start` starts at once, and before each `npm start` after a
 * change. It says what it does and how long it took. A stand-in for tsc keeps these tests fast.
 */

const run = promisify(execFile);
const isCurrent = buildIsCurrent as (entry: string, base: string) => boolean;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * A checkout with bin/, package.json, a source file and a tsc that writes dist/ (or fails with
 * `tscExit`), after `tscMs` milliseconds.
 */
function checkout(options: { tscExit?: number; tscMs?: number; tsc?: boolean; src?: boolean } = {}): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'idp-build-'));
  folders.push(base);
  cpSync(path.join(projectRoot, 'bin'), path.join(base, 'bin'), { recursive: true });
  cpSync(path.join(projectRoot, 'package.json'), path.join(base, 'package.json'));
  if (options.src !== false) {
    mkdirSync(path.join(base, 'src'));
    writeFileSync(path.join(base, 'src/main.ts'), '');
    for (const file of ['src/main.ts', 'src']) utimesSync(path.join(base, file), 1_000, 1_000);
  }
  if (options.tsc !== false) {
    const tsc = path.join(base, 'node_modules/.bin/tsc');
    mkdirSync(path.dirname(tsc), { recursive: true });
    const exit = options.tscExit ?? 0;
    const wait = options.tscMs ?? 0;
    writeFileSync(
      tsc,
      `#!${process.execPath}\nconst fs = require('node:fs');\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${wait});\nif (${exit}) process.exit(${exit});\nfs.mkdirSync('dist/src', { recursive: true });\nfs.writeFileSync('dist/src/main.js', '');\n`,
    );
    chmodSync(tsc, 0o755);
  }
  return base;
}

const buildIfStale = (base: string) =>
  run(process.execPath, [path.join(base, 'bin/build-if-stale.js')], { cwd: base });

describe('compiling the sources before the server starts', () => {
  it('is what `npm ci` (prepare) and `npm start` (prestart) run', () => {
    const scripts = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts;
    expect(scripts.prepare).toBe('node bin/build-if-stale.js');
    expect(scripts.prestart).toBe('node bin/build-if-stale.js');
  });

  it('builds a stale checkout through `npm run prepare`, saying so and how long it took', async () => {
    const base = checkout();
    const { stderr } = await run('npm', ['run', '--silent', 'prepare'], { cwd: base });
    expect(stderr).toMatch(
      /^idp: compiling the sources to dist\/ with tsc \(some seconds; once after each change, `npm run build` does the same\)\nidp: compiled in \d+\.\d s\n$/,
    );
    expect(isCurrent('main', base)).toBe(true);

    // `npm start` right after: nothing to do, nothing said.
    expect(await buildIfStale(base)).toEqual({ stdout: '', stderr: '' });

    // After a change (the build made older than the sources), the first line says how long the last
    // build took.
    utimesSync(path.join(base, 'dist/src/main.js'), 500, 500);
    expect(isCurrent('main', base)).toBe(false);
    const again = await buildIfStale(base);
    expect(again.stderr).toMatch(
      /^idp: compiling the sources to dist\/ with tsc \(took \d+\.\d s last time; /,
    );
    expect(again.stderr).toMatch(/\nidp: compiled in \d+\.\d s\n$/);
    expect(isCurrent('main', base)).toBe(true);
  });

  it('counts the seconds on one line of a terminal, and clears that line when done', async () => {
    const base = checkout({ tscMs: 2_500 });
    // script(1) runs it on a pseudo-terminal (stderr.isTTY) and copies what the terminal shows.
    const { stdout } = await run(
      'script',
      ['-qefc', `${process.execPath} bin/build-if-stale.js`, '/dev/null'],
      { cwd: base },
    );
    expect(stdout).toMatch(/^idp: compiling the sources to dist\/ with tsc \(some seconds; /);
    expect(stdout).toMatch(/\ridp: compiling… \d+\.\d s/);
    // The count's line is erased (carriage return, erase in line) before the last line.
    expect(stdout).toContain(' s\r\u001b[Kidp: compiled in ');
    expect(stdout).toMatch(/idp: compiled in \d+\.\d s\r?\n$/);
    expect(isCurrent('main', base)).toBe(true);
  });

  it('says when the build failed, and leaves the start to the sources', async () => {
    const base = checkout({ tscExit: 2 });
    const { stderr } = await buildIfStale(base);
    expect(stderr).toMatch(
      /\nidp: the build failed after \d+\.\d s; the sources will run through tsx instead\n$/,
    );
  });

  it('does nothing without the compiler (npm ci --omit=dev) or without the sources (the image)', async () => {
    expect(await buildIfStale(checkout({ tsc: false }))).toEqual({ stdout: '', stderr: '' });
    expect(await buildIfStale(checkout({ src: false }))).toEqual({ stdout: '', stderr: '' });
  });

  it("is in the image's dependency stages before their `npm ci`, with everything it imports", () => {
    const needed = new Set<string>();
    const visit = (file: string) => {
      if (needed.has(file)) return;
      needed.add(file);
      const text = readFileSync(path.join(projectRoot, 'bin', file), 'utf8');
      for (const match of text.matchAll(/^import (?:[^'"]* from )?'\.\/([^']+)'/gm))
        visit(match[1] as string);
    };
    visit('build-if-stale.js');
    expect([...needed].sort()).toEqual(['build-if-stale.js', 'launch.js', 'node-version.js']);
    const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');
    const beforeInstall = dockerfile.slice(0, dockerfile.search(/^RUN npm ci\b/m));
    const copied = [...beforeInstall.matchAll(/^COPY (.+)$/gm)].flatMap((match) =>
      (match[1] as string).split(/\s+/),
    );
    for (const file of needed) expect(copied, `COPY bin/${file} before npm ci`).toContain(`bin/${file}`);
  });
});
