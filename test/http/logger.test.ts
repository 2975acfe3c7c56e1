import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/logger.js';
import { createTestDatabase, usingPostgres } from '../helpers/database.js';
import { capturedLogger } from '../helpers/log-capture.js';

const capture = () => capturedLogger();

describe('logging', () => {
  it('redacts authorization, cookies, passwords, secrets and tokens', () => {
    const { logger, lines } = capture();
    logger.info({
      req: { headers: { authorization: 'Bearer at_secret1', cookie: 'sid=secret2' } },
      res: { headers: { 'set-cookie': 'sid=secret3' } },
      body: { password: 'secret4', client_secret: 'secret5', refresh_token: 'secret6', code: 'secret7' },
      access_token: 'secret8',
    });
    expect(lines.join('')).not.toMatch(/secret\d/);
    expect(lines.join('')).toContain('[REDACTED]');
  });

  it('redacts sensitive query parameters of request URLs', () => {
    expect(redactUrl('/cb?code=ac_123&state=xyz')).toBe('/cb?code=%5BREDACTED%5D&state=xyz');
    expect(redactUrl('/api/v1/oauth/userinfo?access_token=at_1')).not.toContain('at_1');
    expect(redactUrl('/api/v1/platform/status')).toBe('/api/v1/platform/status');
    expect(redactUrl('/x?q=hello')).toBe('/x?q=hello');
  });
});

describe('logged database errors', () => {
  it('carry the SQLSTATE and the statement, never the parameter values, detail or message', async () => {
    const database = await createTestDatabase();
    try {
      const { logger, lines } = capture();
      const failures: unknown[] = [];
      // A type error whose message repeats the value, and a unique violation whose detail names it.
      await sql`select ${'state-value-1'}::int as n`
        .execute(database.db)
        .catch((error) => failures.push(error));
      const user = {
        username: 'nonce_value_2',
        password_hash: 'x',
        email: null,
        display_name: null,
        avatar_url: null,
        game_name: null,
        game_url: null,
        tag_label: null,
        tag_kind: null,
        tag_slug: null,
        disabled_at: null,
      };
      await database.db.insertInto('users').values(user).execute();
      await database.db
        .insertInto('users')
        .values(user)
        .execute()
        .catch((error) => failures.push(error));
      expect(failures).toHaveLength(2);
      for (const failure of failures) {
        logger.error({ err: failure }, 'unhandled error');
        logger.error({ err: new Error('wrapped', { cause: failure }) }, 'unhandled error');
      }
      const text = lines.join('');
      expect(text).not.toMatch(/state-value-1|nonce_value_2/);
      expect(text).toContain('"code":"22P02"');
      expect(text).toContain('"code":"23505"');
      // PGlite's errors carry the statement; node-postgres's do not.
      if (!usingPostgres) {
        expect(text).toContain('"statement":"select $1::int as n"');
        expect(text).toContain('"statement":"insert into \\"users\\"');
      }
      expect(lines.every((line) => JSON.parse(line).err.type !== undefined)).toBe(true);
    } finally {
      await database.drop();
    }
  });
});
