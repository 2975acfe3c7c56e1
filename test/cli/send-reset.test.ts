import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';

/*
 * `idp users send-reset U`, run in process through the CLI's own parsing and execution (test/helpers/cli-in-process.ts): a reset link is queued in the
 * outbox for the user's address, audited as the operator's, and never printed; an unknown, deleted
 * or disabled user, or one without an address, is an exit 1 that says why.
 */

const TIMEOUT = 60_000;
const PUBLIC_URL = 'https://id.example.test';

let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL });
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

function withDatabase<T>(work: (db: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  if (!cli) throw new Error('no CLI');
  return work(cli.database.db);
}

async function createUser(username: string, email?: string) {
  succeeded(
    await idp([
      'users',
      'create',
      '--username',
      username,
      '--password',
      'long enough password',
      ...(email ? ['--email', email] : []),
      '--json',
    ]),
  );
}

/** The queued messages to `recipient`, with their bodies (read as the worker would). */
function queuedTo(recipient: string) {
  return withDatabase((db) =>
    db
      .selectFrom('mail_outbox')
      .select(['kind', 'locale', 'subject', 'text_body', 'html_body'])
      .where('recipient', '=', recipient)
      .orderBy('id')
      .execute(),
  );
}

describe(`idp users send-reset on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('queues a reset link to the address, audited, never printing the token', {
    timeout: TIMEOUT,
  }, async () => {
    await createUser('Rosa', 'rosa@example.org');
    const result = await idp(['users', 'send-reset', 'rosa', '--json']);
    expect(succeeded(result)).toEqual({
      username: 'Rosa',
      email: 'rosa@example.org',
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(result.stdout).not.toContain('pr_');

    const [mail, ...more] = await queuedTo('rosa@example.org');
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ kind: 'password_reset', locale: 'en', subject: 'Reset your password' });
    const token = /\/password\/reset\?token=(pr_[A-Za-z0-9_-]{43})&lang=en/.exec(mail?.text_body ?? '')?.[1];
    expect(token).toBeDefined();
    expect(mail?.html_body).toContain(`${PUBLIC_URL}/password/reset?token=${token}`);
    // Stored as its hash only, valid 30 minutes.
    const links = await withDatabase((db) =>
      db.selectFrom('password_resets').select(['token_hash', 'created_at', 'expires_at']).execute(),
    );
    expect(links).toHaveLength(1);
    expect(links[0]?.token_hash).toBe(hashSecret(token ?? ''));
    const link = links[0];
    expect(new Date(link?.expires_at ?? 0).getTime() - new Date(link?.created_at ?? 0).getTime()).toBe(
      30 * 60 * 1000,
    );

    const audit = succeeded(await idp(['audit', 'tail', '--json']));
    expect(JSON.stringify(audit)).toContain('password_reset_sent');
    expect(JSON.stringify(audit)).toContain('"actor":"operator"');
    expect(JSON.stringify(audit)).not.toContain('pr_');
  });

  it('writes the message in the language of --lang', { timeout: TIMEOUT }, async () => {
    await createUser('Olga', 'olga@example.org');
    succeeded(await idp(['users', 'send-reset', 'olga', '--lang', 'ru', '--json']));
    const [mail] = await queuedTo('olga@example.org');
    expect(mail).toMatchObject({ locale: 'ru', subject: 'Сброс пароля' });
    expect(mail?.text_body).toContain('&lang=ru');
    failed(await idp(['users', 'send-reset', 'olga', '--lang', 'de']), /--lang must be one of en, ru/);
  });

  // The other refusals (deleted, disabled, no address) are the service's, tested in
  // test/web/password-reset.test.ts; here, that a refusal is an exit 1 that says why.
  it('exits 1 for an unknown user, saying so', { timeout: TIMEOUT }, async () => {
    failed(await idp(['users', 'send-reset', 'nobody_here']), /no user named nobody_here/);
  });
});
