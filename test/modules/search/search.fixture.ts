import { afterAll, beforeAll, expect } from 'vitest';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

/** What the search test files share: a fresh app, users made through the service, and the search route. */
export let t: TestApp;

export function setUpSearchApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
}

export const PASSWORD = 'correct horse battery';

export async function user(username: string, displayName?: string): Promise<number> {
  const created = await createUser(
    t.database.db,
    { config: t.config, clock: t.clock },
    {
      username,
      password: PASSWORD,
      ...(displayName ? { displayName } : {}),
    },
  );
  return created.id;
}

/** GET /api/users/search with a raw query string (so repeated and odd parameters can be sent). */
export const searchRaw = (query: string) =>
  t.app.inject({ method: 'GET', url: `/api/users/search?${query}` });

export async function search(params: Record<string, string>) {
  const res = await searchRaw(new URLSearchParams(params).toString());
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json() as { ok: true; query: string; results: Array<Record<string, unknown>> };
}

export const usernames = async (params: Record<string, string>) =>
  (await search(params)).results.map((result) => result.username);
