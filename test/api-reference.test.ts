import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchorOf, type OpenApiDocument, renderOperations, typeOf } from '../scripts/api-markdown.js';
import { END, referencePath, START, withCurrentReference } from '../scripts/api-reference.js';
import { projectRoot } from '../src/lib/paths.js';
import { createTestApp, type TestApp } from './helpers/app.js';

/* docs/api.md: generated from the OpenAPI document the service serves, under a written introduction. */

let t: TestApp;
let document: OpenApiDocument;
beforeAll(async () => {
  t = await createTestApp();
  document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(() => t.close());

describe('the API reference in docs/api.md', () => {
  it('matches the routes the service serves (run `npm run docs:api` after changing them)', () => {
    const text = readFileSync(referencePath, 'utf8');
    expect(withCurrentReference(text, document)).toBe(text);
  });

  it('has a section for every route of the catalogue, under its group', async () => {
    const text = readFileSync(referencePath, 'utf8');
    const { routes } = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string }>;
    };
    const hidden = new Set(['/api/v1/openapi.json', '/api/v1/docs']);
    for (const route of routes.filter((route) => !hidden.has(route.path))) {
      expect(text, `${route.method} ${route.path}`).toContain(
        `### \`${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}\``,
      );
    }
    // The groups in the document's order, each listed in the contents.
    const groups = [...text.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    const tags = (document.tags ?? []).map((tag) => tag.name);
    expect(groups.filter((group) => tags.includes(group ?? ''))).toEqual(tags);
    for (const tag of tags) expect(text).toContain(`- [${tag}](#${anchorOf(tag)})`);
  });

  it('gives each route its parameters, body, response fields and examples', () => {
    const text = readFileSync(referencePath, 'utf8');
    const section = (heading: string) => {
      const start = text.indexOf(heading);
      return text.slice(start, text.indexOf('\n### ', start + heading.length));
    };
    const charge = section('### `POST /api/v1/wallet/charge`');
    expect(charge).toContain('| `idempotency_key` | string | yes |');
    expect(charge).toContain('Response `201` (`application/json`)');
    expect(charge).toContain('| `transaction.id` | string | yes |');
    expect(charge).toContain('"balance_after": 10');
    expect(charge).toContain('Errors (4XX, 5XX): the [error body](#errors).');
    const search = section('### `GET /api/users/search`');
    expect(search).toContain('| `q` | string | yes |');
    expect(search).toContain(
      '| `results[].verification_tier` | `"none"` \\| `"standard"` \\| `"special"` | yes |',
    );
    const token = section('### `POST /api/v1/oauth/token`');
    expect(token).toContain('Body (`application/x-www-form-urlencoded`)');
    expect(token).toContain(
      '| `grant_type` | `"authorization_code"` \\| `"refresh_token"` \\| `"urn:ietf:params:oauth:grant-type:device_code"` | yes |',
    );
    expect(token).toContain('| `access_token` | string | yes |');
    expect(section('### `GET /api/v1/me`')).toContain('"preferred_username": "alice"');
  });

  it('keeps its written introduction, with the error body and the identifiers', () => {
    const text = readFileSync(referencePath, 'utf8');
    const introduction = text.slice(0, text.indexOf(START));
    for (const heading of ['## Callers and credentials', '## Identifiers', '## Errors', '## Pagination']) {
      expect(introduction).toContain(heading);
    }
    expect(introduction).toContain('"error_description"');
    for (const prefix of ['`pk_`', '`sk_`', '`ac_`', '`at_`', '`rt_`', '`tx_`'])
      expect(introduction).toContain(prefix);
    expect(text.indexOf(END)).toBeGreaterThan(text.indexOf(START));
    expect(() => withCurrentReference('no markers', document)).toThrow(/markers/);
  });

  it('writes types a reader understands', () => {
    expect(typeOf({ type: ['string', 'null'] })).toBe('string or null');
    expect(typeOf({ type: 'string', enum: ['a', 'b'] })).toBe('`"a"` | `"b"`');
    expect(typeOf({ type: 'array', items: { type: 'object', properties: {} } })).toBe('array of object');
    expect(typeOf({ anyOf: [{ type: 'string' }, { const: false }] })).toBe('string or `false`');
    expect(renderOperations({ paths: {} })).toBe('## Contents');
  });
});

describe('the documentation points only at what the repository holds', () => {
  const outside = /\b(SPEC|CONTRACT|DESIGN)\.md\b/;
  const documents = [
    'README.md',
    'CONTRIBUTING.md',
    ...readdirSync(path.join(projectRoot, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .map((file) => `docs/${file}`),
  ];

  it.each(documents)('%s names no file the repository lacks', (file) => {
    const lines = readFileSync(path.join(projectRoot, file), 'utf8').split('\n');
    expect(lines.filter((line) => outside.test(line))).toEqual([]);
  });

  it('nor does any source, test, view, script or example file (comments and test names included)', () => {
    // The files git tracks, read as text (images and the lock file skipped).
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: projectRoot, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file && !/\.(png|ico|wasm)$|package-lock\.json$/.test(file));
    const citing = tracked.filter((file) => {
      const text = readFileSync(path.join(projectRoot, file), 'utf8');
      // This file names the pattern it looks for.
      return file !== 'test/api-reference.test.ts' && outside.test(text);
    });
    expect(citing).toEqual([]);
  });

  it('nor does the OpenAPI document the service serves', () => {
    expect(JSON.stringify(document)).not.toMatch(outside);
  });
});
