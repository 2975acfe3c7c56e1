import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seal } from '../../src/lib/sealed-secret.js';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp users mfa-reset U`, run in process: the account's TOTP key, recovery
 * codes and passkeys are removed and the reset is audited as the operator's; an unknown user is an exit 1.
 */

const TIMEOUT = 60_000;
let cli: InProcessCli;

beforeAll(async () => {
  cli = await inProcessCli();
}, TIMEOUT);

afterAll(async () => {
  await cli?.database.drop();
});

describe('idp users mfa-reset', () => {
  it(
    'removes TOTP, the recovery codes and the passkeys, audited',
    async () => {
      const created = succeeded(
        await cli.idp([
          'users',
          'create',
          '--username',
          'lost_phone',
          '--password',
          'long enough password',
          '--json',
        ]),
      ) as unknown as { id: number };
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
