import argon2 from 'argon2';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { commonPasswords } from '../../../src/lib/common-passwords.js';
import { hashPassword } from '../../../src/lib/password.js';
import { findUserByUsername, insertUser } from '../../../src/modules/accounts/accounts.repository.js';
import { authenticate, createUser } from '../../../src/modules/accounts/accounts.service.js';
import { signUp } from '../../../src/modules/accounts/sign-up.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

/** Passwords (docs/pages.md "Profile and password"): 8–256 characters, checked before any hashing; the 10,000 most common refused. */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());
afterEach(() => {
  vi.restoreAllMocks();
});

async function userCount(): Promise<number> {
  const row = await database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A listed password of 8+ characters, taken from the package's list at run time. */
function listedPassword(): string {
  const eligible = [...commonPasswords()].filter((entry) => entry.length >= 8);
  return eligible[Math.floor(Math.random() * eligible.length)] as string;
}

describe('setting a password (createUser: the CLI and every other way in)', () => {
  it.each([
    ['7 characters', 'x7#kQ!p', /at least 8 characters/],
    ['257 characters', 'z'.repeat(257), /at most 256 characters/],
    ['a megabyte', 'z'.repeat(1_000_000), /at most 256 characters/],
    ['a listed password', 'password1', /10,000 most common/],
    ['a listed password in another case', 'QWERTY123', /10,000 most common/],
    ['a password picked from the list', listedPassword(), /10,000 most common/],
  ])('refuses %s with invalid_request before any hashing', async (_why, password, message) => {
    const hash = vi.spyOn(argon2, 'hash');
    const before = await userCount();
    await expect(createUser(database.db, ctx, { username: 'mallory', password })).rejects.toMatchObject({
      status: 400,
      error: 'invalid_request',
      description: expect.stringMatching(message),
    });
    expect(hash).not.toHaveBeenCalled();
    expect(await userCount()).toBe(before);
    expect(await findUserByUsername(database.db, 'mallory')).toBeUndefined();
  });

  it('accepts a rare password of 8 and of 256 characters', async () => {
    await createUser(database.db, ctx, { username: 'short_pw', password: 'x7#kQ!p2' });
    await createUser(database.db, ctx, { username: 'long_pw', password: 'z'.repeat(256) });
    expect(await findUserByUsername(database.db, 'long_pw')).toBeDefined();
    expect(await findUserByUsername(database.db, 'short_pw')).toBeDefined();
  });
});

describe('sign-up', () => {
  it('reports a listed password as password_too_common by its field, creating nobody', async () => {
    const hash = vi.spyOn(argon2, 'hash');
    for (const password of ['qwerty123', listedPassword()]) {
      expect(await signUp(database.db, ctx, { username: 'trudy', password, email: '' })).toEqual({
        ok: false,
        errors: { password: 'password_too_common' },
      });
    }
    expect(hash).not.toHaveBeenCalled();
    expect(await findUserByUsername(database.db, 'trudy')).toBeUndefined();
  });

  it('reports a megabyte password as too long without hashing it', async () => {
    const hash = vi.spyOn(argon2, 'hash');
    const result = await signUp(database.db, ctx, {
      username: 'trudy',
      password: 'z'.repeat(1_000_000),
      email: '',
    });
    expect(result).toEqual({ ok: false, errors: { password: 'password_too_long' } });
    expect(hash).not.toHaveBeenCalled();
  });
});

describe('sign-in', () => {
  it('never applies the new-password rules: an older account with a listed password still signs in', async () => {
    await insertUser(database.db, {
      username: 'legacy',
      passwordHash: await hashPassword('password1'),
      email: null,
      emailVerified: false,
      displayName: null,
      verificationLevel: 0,
      at: clock.now(),
    });
    const result = await authenticate(database.db, ctx, { username: 'legacy', password: 'password1' });
    expect(result).toMatchObject({ ok: true, user: { username: 'legacy' } });
  });
});
