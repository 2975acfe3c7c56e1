import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { verifyPassword } from '../../../src/lib/password.js';
import { findCredentials, findUserByUsername } from '../../../src/modules/accounts/accounts.repository.js';
import { usernameSchema } from '../../../src/modules/accounts/accounts.schemas.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, createTestDatabaseAt, type TestDatabase } from '../../helpers/database.js';

let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describe('usernames', () => {
  it.each(['alice', 'Bob_42', 'x_y', 'a'.repeat(32), '1password'])('accepts %s', (name) => {
    expect(usernameSchema.safeParse(name).success).toBe(true);
  });
  it.each(['ab', 'a'.repeat(33), 'al ice', 'alice!', 'аlice', '12345', 'admin', 'API', 'al\u200Bice', ''])(
    'refuses %j',
    (name) => {
      expect(usernameSchema.safeParse(name).success).toBe(false);
    },
  );
  it('normalizes full-width letters with NFKC', () => {
    expect(usernameSchema.parse('Ａｌｉｃｅ')).toBe('Alice');
  });
});

describe('createUser', () => {
  it('stores an argon2id hash, never the password', async () => {
    const user = await createUser(database.db, ctx, {
      username: 'alice',
      password: 'correct horse battery',
      email: 'alice@example.com',
      emailVerified: true,
      displayName: '  Alice   Liddell ',
      verificationLevel: 2,
    });
    expect(user).toEqual({ id: expect.any(Number), username: 'alice' });
    const found = await findCredentials(database.db, 'ALICE');
    expect(found?.user).toMatchObject({
      username: 'alice',
      email: 'alice@example.com',
      emailVerified: true,
      displayName: 'Alice Liddell',
      verificationLevel: 2,
      disabledAt: null,
    });
    expect(found?.user).not.toHaveProperty('passwordHash');
    expect(found?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(await verifyPassword(found?.passwordHash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(found?.passwordHash, 'wrong')).toBe(false);
    expect(await findUserByUsername(database.db, 'alice')).toEqual(found?.user);
  });

  it('refuses a username that differs only in case or width', async () => {
    for (const username of ['ALICE', 'Ａｌｉｃｅ']) {
      await expect(
        createUser(database.db, ctx, { username, password: 'another password' }),
      ).rejects.toMatchObject({
        error: 'invalid_request',
        description: expect.stringMatching(/already taken/),
      });
    }
  });

  it('refuses a username whose confusable skeleton (Unicode TS #39) is taken', async () => {
    await createUser(database.db, ctx, { username: 'bob_smith', password: 'a long enough password' });
    await createUser(database.db, ctx, { username: 'mary', password: 'a long enough password' });
    for (const username of ['aIice', 'AIice', 'a1ice', 'b0b_smith', 'Bob_Smith', 'rnary']) {
      await expect(
        createUser(database.db, ctx, { username, password: 'another password' }),
      ).rejects.toMatchObject({
        error: 'invalid_request',
        description: expect.stringMatching(/already taken/),
      });
    }
    // Names that only share letters are still free.
    await createUser(database.db, ctx, { username: 'alicia', password: 'a long enough password' });
  });

  it('backfills the skeletons of existing users, keeping every name when two already look alike', async () => {
    const { sql } = await import('kysely');
    const { database: empty, migrator } = await createTestDatabaseAt('0010_authorization_request_max_age');
    try {
      await sql`insert into users (username, password_hash) values ('carol', 'x'), ('caroI', 'x'), ('dave', 'x')`.execute(
        empty.db,
      );
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const rows = await sql<{ username: string; username_skeleton: string | null }>`
        select username, username_skeleton from users order by id`.execute(empty.db);
      expect(rows.rows).toEqual([
        { username: 'carol', username_skeleton: 'carol' },
        { username: 'caroI', username_skeleton: null },
        { username: 'dave', username_skeleton: 'dave' },
      ]);
    } finally {
      await empty.drop();
    }
  });

  it('refuses bad input with a clear message', async () => {
    await expect(createUser(database.db, ctx, { username: 'bob', password: 'short' })).rejects.toMatchObject({
      description: expect.stringMatching(/at least 8/),
    });
    await expect(
      createUser(database.db, ctx, { username: 'bob', password: 'long enough', email: 'not-an-email' }),
    ).rejects.toMatchObject({ description: expect.stringMatching(/e-mail/) });
    await expect(
      createUser(database.db, ctx, { username: 'bob', password: 'long enough', verificationLevel: 3 }),
    ).rejects.toMatchObject({ description: expect.stringMatching(/0, 1 or 2/) });
    await expect(
      createUser(database.db, ctx, { username: 'bob', password: 'long enough', displayName: 'a\u0000b' }),
    ).rejects.toMatchObject({ description: expect.stringMatching(/control/) });
  });

  it('runs a full verify for an unknown user (no timing oracle)', async () => {
    const verify = vi.spyOn(argon2, 'verify');
    expect(await verifyPassword(undefined, 'anything')).toBe(false);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[0]).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    verify.mockRestore();
  });
});
