import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCommand } from '../../src/cli/run-command.js';
import { systemClock } from '../../src/lib/clock.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { recordAudit } from '../../src/modules/audit/audit.repository.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { testConfig } from '../helpers/app.js';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp audit tail --user --client --action --since --limit`, run in process through the CLI's own
 * parsing and execution: the filters, the names beside the references (in the text output instead
 * of `user:1`, in the JSON beside them), and every malformed option refused as a usage mistake.
 */

const TIMEOUT = 60_000;
let cli: InProcessCli | undefined;
const ids = { carol: 0, dave: 0, operator: 0, client: '' };

beforeAll(async () => {
  cli = await inProcessCli();
  const db = cli.database.db;
  const ctx = { config: testConfig(), clock: systemClock };
  const make = (username: string) =>
    createUser(db, ctx, { username, password: 'correct horse battery staple' }).then((u) => u.id);
  ids.carol = await make('carol_tail');
  ids.dave = await make('dave_tail');
  ids.operator = await make('otto_ops');
  ids.client = (
    await createClient(db, ctx, {
      name: 'Tail Shop',
      siteUrl: 'https://shop.example',
      redirectUris: ['https://shop.example/cb'],
    })
  ).client_id;
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000);
  const events = [
    { at: at(3 * 24 * 60), actor: `user:${ids.carol}`, action: 'sign_in', subject: `user:${ids.carol}` },
    { at: at(90), actor: `user:${ids.carol}`, action: 'consent_allowed', subject: `client:${ids.client}` },
    { at: at(30), actor: `client:${ids.client}`, action: 'wallet_charged', subject: `user:${ids.dave}` },
    {
      at: at(10),
      actor: `operator:${ids.operator}`,
      action: 'account_disabled',
      subject: `user:${ids.carol}`,
      details: { operator: 'otto_ops', role: 'owner' },
    },
  ];
  for (const event of events) await recordAudit(db, { ...event, ip: '198.51.100.7' } as never);
});

afterAll(async () => {
  await cli?.database.drop();
});

const idp = (args: readonly string[]) => {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
};

type Tail = { events: Array<Record<string, unknown>> };
const actions = (result: Record<string, unknown>) => (result as Tail).events.map((event) => event.action);

describe(`idp audit tail on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('filters by user (username or id), client, action and since, oldest first', {
    timeout: TIMEOUT,
  }, async () => {
    const carol = ['sign_in', 'consent_allowed', 'account_disabled'];
    expect(actions(succeeded(await idp(['audit', 'tail', '--user', 'carol_tail', '--json'])))).toEqual(carol);
    expect(actions(succeeded(await idp(['audit', 'tail', '--user', String(ids.carol), '--json'])))).toEqual(
      carol,
    );
    expect(actions(succeeded(await idp(['audit', 'tail', '--client', ids.client, '--json'])))).toEqual([
      'consent_allowed',
      'wallet_charged',
    ]);
    expect(actions(succeeded(await idp(['audit', 'tail', '--action', 'wallet_charged', '--json'])))).toEqual([
      'wallet_charged',
    ]);
    expect(
      actions(succeeded(await idp(['audit', 'tail', '--user', 'carol_tail', '--since', '2h', '--json']))),
    ).toEqual(['consent_allowed', 'account_disabled']);
    const day = new Date(Date.now() - 24 * 3600_000).toISOString();
    expect(actions(succeeded(await idp(['audit', 'tail', '--since', day, '--json'])))).toEqual([
      'consent_allowed',
      'wallet_charged',
      'account_disabled',
    ]);
    // --limit keeps the newest matching, still printed oldest first.
    expect(
      actions(succeeded(await idp(['audit', 'tail', '--user', 'carol_tail', '--limit', '2', '--json']))),
    ).toEqual(['consent_allowed', 'account_disabled']);
  });

  it('gives the names beside the raw references in JSON, and instead of them in text', {
    timeout: TIMEOUT,
  }, async () => {
    const json = succeeded(await idp(['audit', 'tail', '--since', '1h', '--json'])) as Tail;
    expect(json.events).toEqual([
      expect.objectContaining({
        actor: `client:${ids.client}`,
        actor_name: 'Tail Shop',
        subject: `user:${ids.dave}`,
        subject_name: 'dave_tail',
        ip: '198.51.100.7',
      }),
      expect.objectContaining({
        actor: `operator:${ids.operator}`,
        actor_name: 'otto_ops',
        action: 'account_disabled',
        subject: `user:${ids.carol}`,
        subject_name: 'carol_tail',
        details: { operator: 'otto_ops', role: 'owner' },
      }),
    ]);
    const text = await idp(['audit', 'tail', '--since', '1h']);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\S+Z  Tail Shop \\(client:${ids.client}\\)  wallet_charged  dave_tail  198\\.51\\.100\\.7  \\{\\}$`,
      ),
    );
    expect(lines[1]).toContain(`  operator otto_ops  account_disabled  carol_tail  198.51.100.7  {`);
    expect(text.stdout).not.toMatch(/ user:\d/);
  });

  it('refuses malformed options as usage mistakes, before opening the database', {
    timeout: TIMEOUT,
  }, async () => {
    for (const [args, message] of [
      [
        ['--since', 'yesterday'],
        /^idp: --since must be an ISO date or time .*got "yesterday"\nusage: idp audit tail/,
      ],
      [['--since', '15x'], /--since must be/],
      [['--action', 'Not An Action'], /^idp: --action must be an action name/],
      [['--limit', '0'], /^idp: --limit must be a whole number from 1 to 1000, got "0"/],
      [['--user', ''], /^idp: --user must not be empty/],
    ] as const) {
      failed(await idp(['audit', 'tail', ...args]), message);
      // Refused by the parsing alone, which opens no database.
      expect(prepareCommand(['audit', 'tail', ...args])).toMatchObject({
        exitCode: 1,
        stderr: expect.stringMatching(message),
      });
    }
  });

  it('says which account or client it does not know', { timeout: TIMEOUT }, async () => {
    failed(
      await idp(['audit', 'tail', '--user', 'nobody_at_all']),
      /^idp: no account with the username or id 'nobody_at_all'\nusage:/,
    );
    failed(
      await idp(['audit', 'tail', '--client', 'pk_nothing']),
      /^idp: no client with the client_id 'pk_nothing'/,
    );
  });
});
