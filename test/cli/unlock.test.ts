import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp users unlock U`, run in process: the account's counts of failed passwords and codes (every
 * source) and its run of wrong second-step codes are cleared, audited as the operator's; an
 * unknown user is an exit 1.
 */

const TIMEOUT = 60_000;
let cli: InProcessCli;

beforeAll(async () => {
  cli = await inProcessCli();
}, TIMEOUT);

afterAll(async () => {
  await cli?.database.drop();
});

describe('idp users unlock', () => {
  it(
    'clears every sign-in count and the run of wrong codes, audited',
    async () => {
      const created = succeeded(
        await cli.idp([
          'users',
          'create',
          '--username',
          'locked_out',
          '--password',
          'long enough password',
          '--json',
        ]),
      ) as unknown as { id: number };
      const db = cli.database.db;
      const at = new Date();
      await db
        .insertInto('sign_in_attempts')
        .values([
          { user_id: created.id, source: '', attempts: 10, window_started_at: at },
          { user_id: created.id, source: 'device:x', attempts: 4, window_started_at: at },
        ])
        .execute();
      await db
        .insertInto('second_factor_failures')
        .values({ user_id: created.id, failures: 20, last_checked_at: at })
        .execute();

      const out = succeeded(await cli.idp(['users', 'unlock', 'locked_out', '--json']));
      expect(out).toEqual({ username: 'locked_out', second_factor_failures: 20 });
      expect(
        await db.selectFrom('sign_in_attempts').selectAll().where('user_id', '=', created.id).execute(),
      ).toEqual([]);
      expect(
        await db.selectFrom('second_factor_failures').selectAll().where('user_id', '=', created.id).execute(),
      ).toEqual([]);
      const event = await db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'sign_in_unlocked')
        .executeTakeFirstOrThrow();
      expect(event).toMatchObject({
        actor: 'operator',
        subject: `user:${created.id}`,
        details: { second_factor_failures: 20 },
      });
    },
    TIMEOUT,
  );

  it(
    'an unknown user is an exit 1 that says so',
    async () => {
      failed(await cli.idp(['users', 'unlock', 'nobody_at_all']), /nobody_at_all/);
    },
    TIMEOUT,
  );
});
