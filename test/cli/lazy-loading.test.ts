import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSources, staticClosure } from '../helpers/architecture.js';
import { templateDataDir } from '../helpers/cli.js';

/*
 * What the `idp` process and the server load before they can answer: a command's services, the
 * configuration and the database only for a command that runs; `--help` nothing but the command
 * table; the server nothing of the CLI's before it listens.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const sources = [...readSources(root, 'src'), ...readSources(root, 'migrations')];
const folder = mkdtempSync(path.join(os.tmpdir(), 'idp-lazy-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the modules src/cli/main.ts loads with itself', () => {
  const { files, packages } = staticClosure(sources, 'src/cli/main.ts');

  it('are the command table alone: no package, no service, no database, no configuration', () => {
    expect([...packages]).toEqual([]);
    const loaded = [...files];
    expect(
      loaded.filter((file) => /^src\/(modules\/.*\.(service|repository)\.ts|db\/|config\.ts)/.test(file)),
    ).toEqual([]);
    expect(loaded).toEqual(expect.arrayContaining(['src/cli/run-command.ts', 'src/cli/users.commands.ts']));
  });
});

describe('the modules src/main.ts loads with itself', () => {
  const { files, packages } = staticClosure(sources, 'src/main.ts');

  it('hold none of the CLI, neither database driver nor the application (loaded while the database opens)', () => {
    expect([...files].filter((file) => file.startsWith('src/cli/'))).toEqual([]);
    expect([...files]).not.toContain('src/app.ts');
    for (const driver of ['pg', '@electric-sql/pglite', 'kysely-pglite-dialect'])
      expect([...packages]).not.toContain(driver);
  });
});

/** Runs the compiled `idp` (test/global-setup.ts builds it) and lists the modules it resolved. */
function idpLoading(args: string[], env: Record<string, string>) {
  const list = path.join(folder, `loaded-${args.join('-')}.txt`);
  const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(list)}, resolved.url + '\\n');
  return resolved;
}`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const result = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, 'bin/idp.js', ...args],
    { cwd: root, env: { ...process.env, IDP_RUN_BUILD: '1', ...env }, encoding: 'utf8' },
  );
  return {
    ...result,
    loaded: existsSync(list) ? readFileSync(list, 'utf8').split('\n').filter(Boolean) : [],
  };
}

describe('idp --help', () => {
  const dataDir = path.join(folder, 'data');
  // The migrated template: an empty DATA_DIR would add initdb and every migration to the command's
  // run, under the module hook that records each import; that took over 30 s on a busy two-core
  // machine. (A PostgreSQL run makes the template first, in this hook's longer time.)
  beforeAll(() => templateDataDir(dataDir));

  it('answers without the configuration, a database driver or a service, and opens no database', () => {
    const dataDir = path.join(folder, 'never-opened');
    const { status, stdout, loaded } = idpLoading(['--help'], { DATA_DIR: dataDir });
    expect(status).toBe(0);
    expect(stdout).toContain('idp: the operator CLI');
    expect(loaded.length).toBeGreaterThan(0);
    expect(
      loaded.filter((url) =>
        /node_modules|\/src\/db\/|\/src\/modules\/.*\.(service|repository|routes|schemas)\.js|\/src\/config\.js/.test(
          url,
        ),
      ),
    ).toEqual([]);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a command that runs loads its service when it runs, and works', () => {
    const { status, stdout, stderr, loaded } = idpLoading(['keys', 'list', '--json'], { DATA_DIR: dataDir });
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ keys: [] });
    expect(loaded.some((url) => url.endsWith('/src/modules/oidc/keys.service.js'))).toBe(true);
    // PGlite only: the PostgreSQL driver stays unloaded.
    expect(loaded.filter((url) => /node_modules\/pg\//.test(url))).toEqual([]);
  });
});
