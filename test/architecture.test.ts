import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  countLines,
  describeOffences,
  findEntryImports,
  findImpureLib,
  findLayerViolations,
  findLongFiles,
  findSqlOutsideRepositories,
  importsOf,
  readSources,
  type SourceFile,
} from './helpers/architecture.js';

/*
 * The layering rules of CONTRIBUTING.md "Layout", checked over src/: dependencies point one way
 * (lib → db → repositories → services → http / web → app → main). Each failure lists file:line.
 * The checkers are first run on small fixtures, so that a clean tree means something.
 */

const file = (path: string, ...lines: string[]): SourceFile => ({ path, text: `${lines.join('\n')}\n` });

describe('the checkers, on fixtures', () => {
  it('find query building and raw SQL outside repositories and src/db', () => {
    const files = [
      file(
        'src/modules/a/a.service.ts',
        "import { sql } from 'kysely';",
        'export async function f(db) {',
        "  await db.selectFrom('users').selectAll().execute();",
        '  await db.transaction().execute(async (trx) => trx);',
        '  await sql`select 1`.execute(db);',
        "  return sql<number>`1` && sql.raw('x') && sql.ref('a') && sql.table('t');",
        '}',
      ),
      file(
        'src/modules/a/a.routes.ts',
        "await db\n  .insertInto('x')",
        "db.updateTable('x'); db.deleteFrom('x');",
      ),
      file(
        'src/cli/c.ts',
        "db.replaceInto('x'); db.mergeInto('x');",
        "db.executeQuery(CompiledQuery.raw('x'));",
      ),
      file('src/modules/a/a.repository.ts', "db.selectFrom('users'); sql`select 1`;"),
      file('src/db/migrate.ts', 'sql`select 1`;'),
      file('src/modules/b/b.service.ts', '// db.selectFrom() in a comment', '/**', ' * sql`x` too', ' */'),
      file('src/modules/b/b.helpers.ts', "const url = 'https://x.example'; db.with('w', (q) => q);"),
    ];
    expect(describeOffences(findSqlOutsideRepositories(files))).toEqual([
      'src/cli/c.ts:1 query building: .replaceInto(',
      'src/cli/c.ts:1 query building: .mergeInto(',
      'src/cli/c.ts:2 raw sql: .executeQuery(',
      'src/cli/c.ts:2 raw sql: CompiledQuery.raw',
      'src/modules/a/a.routes.ts:2 query building: .insertInto(',
      'src/modules/a/a.routes.ts:3 query building: .updateTable(',
      'src/modules/a/a.routes.ts:3 query building: .deleteFrom(',
      'src/modules/a/a.service.ts:3 query building: .selectFrom(',
      'src/modules/a/a.service.ts:5 raw sql: sql`',
      'src/modules/a/a.service.ts:6 raw sql: sql<',
      'src/modules/a/a.service.ts:6 raw sql: sql.raw',
      'src/modules/a/a.service.ts:6 raw sql: sql.ref',
      'src/modules/a/a.service.ts:6 raw sql: sql.table',
    ]);
  });

  it('find files over 300 lines', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `const x${i} = ${i};`);
    expect(countLines('a\nb\n')).toBe(2);
    expect(countLines('a\nb')).toBe(2);
    expect(
      describeOffences(findLongFiles([file('src/ok.ts', ...lines(300)), file('src/big.ts', ...lines(301))])),
    ).toEqual(['src/big.ts:301 301 lines (at most 300)']);
  });

  it('find services and repositories that know about HTTP, and repositories that call services', () => {
    const files = [
      file(
        'src/modules/a/a.service.ts',
        "import type { FastifyRequest } from 'fastify';",
        "import { tokensIssued } from '../../http/metrics.js';",
        "import { PageError } from '../../web/pages.js';",
        "import type { x } from './a.routes.js';",
        "import { findA } from './a.repository.js';",
        "import { b } from '../b/b.service.js';",
        "import cookie from '@fastify/cookie';",
      ),
      file(
        'src/modules/a/a.repository.ts',
        "import { f } from './a.service.js';",
        "export { g } from '../../http/errors.js';",
        "import type { Database } from '../../db/schema.js';",
      ),
      file(
        'src/modules/a/a.routes.ts',
        "import type { FastifyInstance } from 'fastify';",
        "import { f } from './a.service.js';",
      ),
    ];
    expect(describeOffences(findLayerViolations(files))).toEqual([
      'src/modules/a/a.repository.ts:1 a repository imports a service: ./a.service.js',
      'src/modules/a/a.repository.ts:2 a repository imports src/http: ../../http/errors.js',
      'src/modules/a/a.service.ts:1 a service imports fastify: fastify',
      'src/modules/a/a.service.ts:2 a service imports src/http: ../../http/metrics.js',
      'src/modules/a/a.service.ts:3 a service imports src/web: ../../web/pages.js',
      'src/modules/a/a.service.ts:4 a service imports a route plugin: ./a.routes.js',
      'src/modules/a/a.service.ts:7 a service imports fastify: @fastify/cookie',
    ]);
  });

  it('find imports of app.ts and main.ts, and value imports in context.ts', () => {
    const files = [
      file('src/main.ts', "import { buildApp } from './app.js';"),
      file('src/http/x.ts', "import type { AppDeps } from '../app.js';"),
      file('src/cli/y.ts', "const { main } = await import('../main.js');"),
      file(
        'src/context.ts',
        "import type { Kysely } from 'kysely';",
        "import { type Config, type Other } from './config.js';",
        "import { Clock } from './lib/clock.js';",
        "import { systemClock, type Clock2 } from './lib/clock.js';",
      ),
    ];
    expect(describeOffences(findEntryImports(files))).toEqual([
      'src/cli/y.ts:1 imports src/main.ts',
      'src/context.ts:3 a value import in the leaf: ./lib/clock.js',
      'src/context.ts:4 a value import in the leaf: ./lib/clock.js',
      'src/http/x.ts:1 imports src/app.ts',
    ]);
  });

  it('find src/lib importing the rest of src/', () => {
    const files = [
      file(
        'src/lib/a.ts',
        "import { b } from './b.js';",
        "import argon2 from 'argon2';",
        "import type { Config } from '../config.js';",
      ),
      file('src/lib/b.ts', "import { findUser } from '../modules/accounts/accounts.repository.js';"),
      file('src/http/c.ts', "import { Config } from '../config.js';"),
    ];
    expect(describeOffences(findImpureLib(files))).toEqual([
      'src/lib/a.ts:3 src/lib imports src/config.ts',
      'src/lib/b.ts:1 src/lib imports src/modules/accounts/accounts.repository.ts',
    ]);
  });

  it('read multi-line, re-exported and type-only imports', () => {
    const imports = importsOf(
      file(
        'src/modules/a/a.ts',
        'import {',
        '  type A,',
        '  type B,',
        "} from '../b/b.js';",
        "export * from './c.js';",
        "import './side-effect.js';",
      ),
    );
    expect(imports.map((i) => [i.target, i.line, i.typeOnly])).toEqual([
      ['src/modules/b/b.ts', 1, true],
      ['src/modules/a/c.ts', 5, false],
      ['src/modules/a/side-effect.ts', 6, false],
    ]);
  });
});

describe('src/', () => {
  const sources = readSourcesOnce();

  it('has no SQL outside *.repository.ts and src/db (migrations/ is outside src)', () => {
    expect(describeOffences(findSqlOutsideRepositories(sources))).toEqual([]);
  });

  it('has no file over 300 lines', () => {
    expect(describeOffences(findLongFiles(sources))).toEqual([]);
  });

  it('has no service or repository that imports HTTP, and no repository that imports a service', () => {
    expect(describeOffences(findLayerViolations(sources))).toEqual([]);
  });

  it('imports app.ts only from main.ts, main.ts from nowhere, and only types into context.ts', () => {
    expect(describeOffences(findEntryImports(sources))).toEqual([]);
  });

  it('keeps src/lib free of the rest of src/', () => {
    expect(describeOffences(findImpureLib(sources))).toEqual([]);
  });
});

function readSourcesOnce(): SourceFile[] {
  return readSources(fileURLToPath(new URL('..', import.meta.url)));
}
