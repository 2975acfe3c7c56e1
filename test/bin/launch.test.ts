import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { buildIsCurrent, SERVER_ENV, SERVER_NODE_FLAGS } from '../../bin/launch.js';
import { projectRoot } from '../../src/lib/paths.js';

/*
 * bin/launch.js runs the compiled dist/ of a checkout only while it is a build of the sources as
 * they are; any later change to src/, migrations/ or the compiler's settings sends it back to tsx.
 */

const isCurrent = buildIsCurrent as (entry: string, base: string) => boolean;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A checkout whose every file was last written at `sourcesAt`, and its build at `builtAt` (seconds). */
function checkout(sourcesAt: number, builtAt: number | undefined): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'idp-launch-'));
  folders.push(base);
  const files = [
    'src/main.ts',
    'src/cli/main.ts',
    'migrations/0001_initial.ts',
    'tsconfig.json',
    'tsconfig.build.json',
  ];
  for (const file of files) {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(path.join(base, file), '');
  }
  for (const file of [...files, 'src/cli', 'src', 'migrations'])
    utimesSync(path.join(base, file), sourcesAt, sourcesAt);
  if (builtAt !== undefined) {
    mkdirSync(path.join(base, 'dist/src'), { recursive: true });
    writeFileSync(path.join(base, 'dist/src/main.js'), '');
    utimesSync(path.join(base, 'dist/src/main.js'), builtAt, builtAt);
  }
  return base;
}

describe('buildIsCurrent', () => {
  it('is true for a build written after the last change to its sources', () => {
    expect(isCurrent('main', checkout(1_000, 2_000))).toBe(true);
  });

  it('is false without a build', () => {
    expect(isCurrent('main', checkout(1_000, undefined))).toBe(false);
  });

  it('is false once a source file, a migration or the compiler settings changed after the build', () => {
    for (const file of ['src/cli/main.ts', 'migrations/0001_initial.ts', 'tsconfig.json']) {
      const base = checkout(1_000, 2_000);
      utimesSync(path.join(base, file), 3_000, 3_000);
      expect(isCurrent('main', base), file).toBe(false);
    }
  });

  it('is false once a source file was added or deleted (its folder changed)', () => {
    const base = checkout(1_000, 2_000);
    rmSync(path.join(base, 'src/cli/main.ts'));
    expect(isCurrent('main', base)).toBe(false);
  });
});

describe('launch', () => {
  it('gives each entry point its own compile cache, since V8 refuses code cached under other flags', () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'idp-launch-cache-'));
    folders.push(tmp);
    const { NODE_COMPILE_CACHE: _cache, ...env } = process.env;
    execFileSync(process.execPath, ['bin/idp.js', '--help'], {
      cwd: projectRoot,
      env: { ...env, TMPDIR: tmp },
      stdio: 'ignore',
    });
    expect(readdirSync(path.join(tmp, 'node-compile-cache'))).toEqual(['idp-cli-main']);
  });
});

describe("the server's V8 flags and environment", () => {
  it('are the same for npm start and the benchmark (the image: test/docker.test.ts)', () => {
    const flags = SERVER_NODE_FLAGS as string[];
    expect(flags.length).toBeGreaterThan(0);
    const start = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts.start;
    const env = Object.entries(SERVER_ENV as Record<string, string>).map(
      ([name, value]) => `${name}=${value}`,
    );
    expect(env.length).toBeGreaterThan(0);
    expect(start).toBe(`${env.join(' ')} node ${flags.join(' ')} bin/server.js`);
    const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(
      `CMD ${JSON.stringify(['node', ...flags, 'bin/server.js']).replaceAll(',', ', ')}`,
    );
    const bench = readFileSync(path.join(projectRoot, 'bench/service.ts'), 'utf8');
    expect(bench).toContain('...SERVER_NODE_FLAGS');
    expect(bench).toContain('...SERVER_ENV');
  });
});
