import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { usingPostgres } from '../../helpers/database.js';
import { mintCode } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';
import { client, setUpTokenApp, t, user } from './token.fixture.js';

/*
 * Issuing tokens locks no user or client row (migrations/0029): an exchange and a refresh go
 * through while another transaction holds both. Only PostgreSQL has other sessions.
 */

setUpTokenApp();

/** The answer's status, or 'waited' when it did not come within 3 s. */
async function statusWithin3s(answer: Promise<{ statusCode: number }>): Promise<number | 'waited'> {
  const waited = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 3000));
  const res = await Promise.race([answer, waited]);
  return res === 'waited' ? res : res.statusCode;
}

describe.skipIf(!usingPostgres)('the token endpoint and row locks', () => {
  it("exchanges a code and refreshes while the user's and the client's rows are locked", async () => {
    const code = await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] });
    const first = (
      await exchangeCode(
        t.app,
        client,
        await mintCode(t, client, user, { scopes: ['openid', 'offline_access'] }),
      )
    ).json() as {
      refresh_token: string;
    };
    await t.database.db.transaction().execute(async (trx) => {
      await sql`select 1 from users where id = ${user.id} for update`.execute(trx);
      await sql`select 1 from clients where client_id = ${client.clientId} for update`.execute(trx);
      // A foreign key's check would wait for this transaction (FOR KEY SHARE against FOR UPDATE).
      expect(await statusWithin3s(exchangeCode(t.app, client, code))).toBe(200);
      const refresh = postForm(
        t.app,
        '/api/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: first.refresh_token },
        { authorization: basic(client) },
      );
      expect(await statusWithin3s(refresh)).toBe(200);
    });
  });
});
