import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import {
  findUsersExactly,
  idOfTerm,
  presentAccount,
  searchUsersForConsole,
  USER_PAGE_SIZE,
} from '../../../src/modules/user-admin/user-search.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeUser } from '../../helpers/factories.js';

/*
 * The console's user search: every account (disabled and deleted ones too) by id, username,
 * display name or address; the id first, then names and addresses starting with the term (exact
 * first), then those containing it; pages of 25.
 */

let t: TestApp;
const ids: Record<string, number> = {};

async function user(username: string, fields: { email?: string; displayName?: string } = {}) {
  const made = await makeUser(t, { username, bare: true, ...fields });
  ids[username] = made.id;
  return made;
}

const names = async (q: string, page?: number) =>
  (await searchUsersForConsole(t.database.db, { q, page })).rows.map((row) => row.username);

beforeAll(async () => {
  t = await createTestApp();
  await user('alice', { email: 'alice@example.com' });
  await user('alice2', { email: 'a2@example.com' });
  await user('bob', { email: 'alice.b@mail.test' });
  await user('xalice', { email: 'x@example.com' });
  await user('coop', { email: 'coop@example.com', displayName: 'Alice Cooper' });
  await user('carol', { email: 'Shared@Example.org' });
  await user('dave', { email: 'shared@example.org' });
  await user('gone', { email: 'gone@example.com' });
  await user('agent_987654');
  await disableUser(t.database.db, depsOf(t).ctx, { username: 'gone' });
  for (let i = 0; i < 30; i += 1) await user(`pg_${String(i).padStart(2, '0')}`);
});
afterAll(() => t.close());

describe('ranking', () => {
  it('puts the exact username first, then prefixes of usernames and addresses in code point order, then substrings', async () => {
    // "alice" < "alice cooper" (coop's display name) < "alice.b@mail.test" (bob's) < "alice2".
    const found = await names('alice');
    expect(found).toEqual(['alice', 'coop', 'bob', 'alice2', 'xalice']);
    const rows = (await searchUsersForConsole(t.database.db, { q: 'alice' })).rows;
    expect(rows.map((row) => row.match)).toEqual(['prefix', 'prefix', 'prefix', 'prefix', 'substring']);
  });

  it('finds an exact address, in any case, before anything else', async () => {
    expect((await names('ALICE@example.com'))[0]).toBe('alice');
    expect(await names('shared@example.org')).toEqual(['carol', 'dave']);
  });

  it('finds an address by its start only: a term with an @ is not looked for inside addresses', async () => {
    expect(await names('alice.b@')).toEqual(['bob']);
    expect(await names('ce@example.com')).toEqual([]);
    expect(await names('example.com')).toContain('alice');
  });

  it('finds a display name by a part of it, and by its start among the prefixes', async () => {
    expect(await names('cooper')).toEqual(['coop']);
    const [row] = (await searchUsersForConsole(t.database.db, { q: 'Alice Coo' })).rows;
    expect([row?.username, row?.match]).toEqual(['coop', 'prefix']);
  });

  it('finds an account by its id, as digits or as the audit log writes it, first', async () => {
    const id = ids.coop as number;
    expect((await names(String(id)))[0]).toBe('coop');
    expect((await names(`user:${id}`))[0]).toBe('coop');
    // Digits that name no account are looked for inside names; an account's id is the answer.
    expect(await names(String(ids.pg_07))).toEqual(['pg_07']);
    expect(await names('987654')).toEqual(['agent_987654']);
    expect(idOfTerm('12abc')).toBeUndefined();
    expect(idOfTerm('0')).toBeUndefined();
    expect(idOfTerm('99999999999999999')).toBeUndefined();
  });

  it('finds disabled accounts and says so', async () => {
    const [row] = (await searchUsersForConsole(t.database.db, { q: 'gone' })).rows;
    expect(row?.disabledAt).not.toBeNull();
    expect(presentAccount(row as NonNullable<typeof row>).status).toBe('disabled');
  });

  it('looks only at prefixes for a term shorter than a trigram', async () => {
    const page = await searchUsersForConsole(t.database.db, { q: 'al' });
    expect(page.prefixOnly).toBe(true);
    expect(page.rows.map((row) => row.username)).not.toContain('xalice');
    expect(page.rows.map((row) => row.username)).toContain('alice');
  });

  it('treats LIKE wildcards as the characters they are', async () => {
    expect(await names('a%e')).toEqual([]);
    expect(await names('_lice')).toEqual([]);
  });
});

describe('pages', () => {
  it('shows 25 rows a page and whether more follow', async () => {
    const first = await searchUsersForConsole(t.database.db, { q: 'pg_' });
    expect(first.rows).toHaveLength(USER_PAGE_SIZE);
    expect(first.hasNext).toBe(true);
    expect(first.rows[0]?.username).toBe('pg_00');
    const second = await searchUsersForConsole(t.database.db, { q: 'pg_', page: 2 });
    expect(second.rows.map((row) => row.username)).toEqual(['pg_25', 'pg_26', 'pg_27', 'pg_28', 'pg_29']);
    expect(second.hasNext).toBe(false);
  });

  it('lists the newest accounts without a term', async () => {
    const page = await searchUsersForConsole(t.database.db, {});
    expect(page.rows[0]?.username).toBe('pg_29');
    expect(page.hasNext).toBe(true);
  });

  it('reads a page number out of range as the nearest one', async () => {
    expect((await searchUsersForConsole(t.database.db, { q: 'pg_', page: -3 })).page).toBe(1);
    expect((await searchUsersForConsole(t.database.db, { q: 'pg_', page: 10_000 })).page).toBe(40);
  });
});

describe('findUsersExactly', () => {
  it('finds by username in any case, by address (every holder) and by id', async () => {
    expect((await findUsersExactly(t.database.db, { username: 'ALICE' })).map((r) => r.username)).toEqual([
      'alice',
    ]);
    expect(
      (await findUsersExactly(t.database.db, { email: 'SHARED@example.org' })).map((r) => r.username),
    ).toEqual(['carol', 'dave']);
    expect((await findUsersExactly(t.database.db, { id: ids.bob as number })).map((r) => r.username)).toEqual(
      ['bob'],
    );
    expect(await findUsersExactly(t.database.db, { username: 'nobody' })).toEqual([]);
  });
});
