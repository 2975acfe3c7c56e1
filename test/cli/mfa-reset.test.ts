import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seal } from '../../src/lib/sealed-secret.js';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * The operator's ways back into an account, run in process. `idp users mfa-reset U`: the account's
 * TOTP key, recovery codes and passkeys are removed. `idp users unlock U`: its counts of failed
 * passwords and codes (every source) and its run of wrong second-step codes are cleared. Both are
 * audited as the operator's; an unknown user is an exit 1.
 */

const TIMEOUT = 60_000;
let cli: InProcessCli;

beforeAll(async () => {
  cli = await inProcessCli();
}, TIMEOUT);

afterAll(async () => {
  await cli?.database.drop();
});

async function createUser(username: string): Promise<{ id: number }> {
  const out = succeeded(
    await cli.idp([
      'users',
      'create',
      '--username',
      username,
      '--password',
      'long enough password',
      '--json',
    ]),
  );
  return out as unknown as { id: number };
}

describe('idp users mfa-reset', () => {
  it(
    'removes TOTP, the recovery codes and the passkeys, audited',
    async () => {
      const created = await createUser('lost_phone');
      const db = cli.database.db;
      const at = new Date();
      await db
        .insertInto('totp_credentials')
        .values({
          user_id: created.id,
          secret_sealed: seal('KEY', 'k'.repeat(32), 'totp-key'),
          created_at: at,
          confirmed_at: at,
        })
        .execute();
      await db
        .insertInto('recovery_codes')
        .values([1, 2].map((n) => ({ user_id: created.id, code_hash: `hash-${n}`, created_at: at })))
        .execute();

      await db
        .insertInto('passkeys')
        .values(
          ['cred-a', 'cred-b'].map((credential) => ({
            user_id: created.id,
            credential_id: credential,
            public_key: 'pk',
            counter: 0,
            transports: ['internal'],
            aaguid: '00000000-0000-0000-0000-000000000000',
            backup_eligible: true,
            backed_up: true,
            name: credential,
            created_at: at,
          })),
        )
        .execute();

      const out = succeeded(await cli.idp(['users', 'mfa-reset', 'lost_phone', '--json'])) as unknown as {
        username: string;
        totpRemoved: boolean;
        passkeysRemoved: number;
      };
      expect(out).toEqual({ username: 'lost_phone', totpRemoved: true, passkeysRemoved: 2 });
      expect(await db.selectFrom('passkeys').selectAll().where('user_id', '=', created.id).execute()).toEqual(
        [],
      );
      expect(
        await db.selectFrom('totp_credentials').selectAll().where('user_id', '=', created.id).execute(),
      ).toEqual([]);
      expect(
        await db.selectFrom('recovery_codes').selectAll().where('user_id', '=', created.id).execute(),
      ).toEqual([]);
      const event = await db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'second_factors_reset')
        .executeTakeFirstOrThrow();
      expect(event).toMatchObject({
        actor: 'operator',
        subject: `user:${created.id}`,
        details: { totp_removed: true, passkeys_removed: 2 },
      });
    },
    TIMEOUT,
  );

  it(
    'an unknown user is an exit 1 that says so',
    async () => {
      failed(await cli.idp(['users', 'mfa-reset', 'nobody_at_all']), /nobody_at_all/);
    },
    TIMEOUT,
  );
});

describe('idp users unlock', () => {
  it(
    'clears every sign-in count and the run of wrong codes, audited',
    async () => {
      const created = await createUser('locked_out');
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
