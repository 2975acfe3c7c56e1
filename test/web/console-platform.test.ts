import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latestAuditEvents } from '../../src/modules/audit/audit.repository.js';
import { findClientByClientId } from '../../src/modules/clients/clients.repository.js';
import { ensureSigningKeys, listSigningKeys } from '../../src/modules/oidc/keys.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { usingPostgres } from '../helpers/database.js';
import { depsOf, makeClient, makeUser } from '../helpers/factories.js';
import { unescapeHtml } from '../helpers/html.js';

/*
 * GET /admin/platform and its actions: status and incidents, the mail outbox and back-channel
 * logouts (counts, latest rows, retry), the signing keys (list, rotate). Each role per route: all
 * read; support retries mail but is refused keys and incidents; an auditor is refused every POST.
 * Each action is recorded with the operator, in its own transaction.
 */

let t: TestApp;
const sessions = {} as Record<'owner' | 'support' | 'auditor', ConsoleSession>;
let failedMailId = 0;
let failedLogoutId = 0;

beforeAll(async () => {
  t = await createTestApp();
  for (const role of ['owner', 'support', 'auditor'] as const)
    sessions[role] = await enterConsole(t, await makeOperator(t, role, { username: `ops_${role}` }));
  const db = t.database.db;
  await ensureSigningKeys(db, depsOf(t).ctx);
  const now = t.clock.now();
  const mail = await db
    .insertInto('mail_outbox')
    .values({
      kind: 'password_reset',
      recipient: 'someone.private@example.org',
      locale: 'en',
      subject: 'Reset',
      text_body: 'https://id.example/reset?token=pr_secret_token_value',
      html_body: '<a href="https://id.example/reset?token=pr_secret_token_value">reset</a>',
      created_at: now,
      next_attempt_at: now,
      attempts: 5,
      failed_at: now,
      last_error:
        '550 5.1.1 <someone.private@example.org>: no such user, see https://mx.example/why?token=pr_x',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  failedMailId = Number(mail.id);
  const client = await makeClient(t, { name: 'Logout Site' });
  const pk = (await findClientByClientId(db, client.clientId))?.id as number;
  const user = await makeUser(t, { username: 'logout_lou' });
  const logout = await db
    .insertInto('backchannel_logouts')
    .values({
      client_pk: pk,
      user_id: user.id,
      sid: 'sid-secret-value',
      reason: 'sign_out',
      created_at: now,
      next_attempt_at: now,
      attempts: 5,
      failed_at: now,
      last_error: 'HTTP 500',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  failedLogoutId = Number(logout.id);
});
afterAll(() => t.close());

/** The row ids the page offers an action on: the hidden id of each form posting to `action`. */
const formIds = (body: string, action: string) =>
  [
    ...body.matchAll(new RegExp(`<form method="post" action="${action}">[^]*?name="id" value="(\\d+)"`, 'g')),
  ].map((m) => Number(m[1]));

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

describe(`the console's platform page on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends a browser without a session to sign in', async () => {
    const res = await new Browser(t.app).get('/admin/platform');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Fplatform');
  });

  it('shows status, outboxes and keys to every role; the forms only to those who may use them', async () => {
    const owner = await sessions.owner.get('/admin/platform');
    expect(owner.statusCode).toBe(200);
    const page = text(owner.body);
    expect(page).toContain('Operational');
    expect(page).toContain('s…@example.org');
    expect(page).toContain('Logout Site');
    expect(page).toContain('logout_lou');
    expect(page).toMatch(/RS256 .* active: signs/);
    expect(owner.body).not.toContain('someone.private');
    expect(owner.body).not.toContain('pr_secret');
    expect(owner.body).not.toContain('pr_x');
    expect(owner.body).not.toContain('sid-secret-value');
    expect(formIds(owner.body, '/admin/platform/mail/retry')).toEqual([failedMailId]);
    expect(owner.body).toContain('action="/admin/platform/keys/rotate"');
    expect(owner.body).toContain('action="/admin/platform/incidents"');
    // Only the failed rows, on asking: the waiting notices of the operators' new authenticators go.
    expect(text(owner.body)).toContain('totp_enabled');
    const failedOnly = await sessions.owner.get('/admin/platform?failed=1');
    expect(formIds(failedOnly.body, '/admin/platform/mail/retry')).toEqual([failedMailId]);
    expect(formIds(failedOnly.body, '/admin/platform/logouts/retry')).toEqual([failedLogoutId]);
    expect(text(failedOnly.body)).not.toContain('totp_enabled');
    expect(failedOnly.body).toContain('href="/admin/platform">Show the latest of every state</a>');
    const support = await sessions.support.get('/admin/platform');
    expect(support.statusCode).toBe(200);
    expect(formIds(support.body, '/admin/platform/logouts/retry')).toEqual([failedLogoutId]);
    expect(support.body).not.toContain('action="/admin/platform/keys/rotate"');
    expect(support.body).not.toContain('action="/admin/platform/incidents"');
    const auditor = await sessions.auditor.get('/admin/platform?lang=ru');
    expect(auditor.statusCode).toBe(200);
    expect(text(auditor.body)).toContain('Очередь писем');
    // The service's own status sentence in the page's language.
    expect(text(auditor.body)).toContain('Все службы работают.');
    expect(auditor.body).not.toMatch(/action="\/admin\/platform\//);
  });

  it('refuses an auditor every action, and support the keys and incidents, changing nothing', async () => {
    const before = (await listSigningKeys(t.database.db)).length;
    const posts: Array<[string, Record<string, string>]> = [
      ['/admin/platform/mail/retry', { id: String(failedMailId) }],
      ['/admin/platform/logouts/retry', { id: String(failedLogoutId) }],
      ['/admin/platform/keys/rotate', { alg: 'ES256' }],
      ['/admin/platform/incidents', { title: 'Refused', severity: 'minor' }],
      ['/admin/platform/incidents/resolve', { id: '1' }],
    ];
    for (const [path, fields] of posts) {
      const res = await sessions.auditor.post(path, fields);
      expect(res.statusCode, `auditor ${path}`).toBe(403);
    }
    for (const [path, fields] of posts.slice(2)) {
      const res = await sessions.support.post(path, fields);
      expect(res.statusCode, `support ${path}`).toBe(403);
    }
    expect((await listSigningKeys(t.database.db)).length).toBe(before);
    const status = (await t.app.inject('/api/v1/platform/status')).json();
    expect(status.incidents).toEqual([]);
    const failed = await t.database.db
      .selectFrom('mail_outbox')
      .select('failed_at')
      .where('id', '=', failedMailId)
      .executeTakeFirstOrThrow();
    expect(failed.failed_at).not.toBeNull();
  });

  it('lets support retry a failed message and logout, recorded with the operator', async () => {
    const mail = await sessions.support.post('/admin/platform/mail/retry', { id: String(failedMailId) });
    expect(mail.statusCode).toBe(303);
    expect(mail.headers.location).toBe('/admin/platform?done=mail_retried');
    const row = await t.database.db
      .selectFrom('mail_outbox')
      .select(['failed_at', 'attempts'])
      .where('id', '=', failedMailId)
      .executeTakeFirstOrThrow();
    expect(row.failed_at).toBeNull();
    expect(row.attempts).toBe(0);
    const logout = await sessions.support.post('/admin/platform/logouts/retry', {
      id: String(failedLogoutId),
    });
    expect(logout.headers.location).toBe('/admin/platform?done=logout_retried');
    const events = await latestAuditEvents(t.database.db, 2);
    expect(events.map((e) => [e.action, e.details.operator, e.details.role])).toEqual([
      ['mail_retried', 'ops_support', 'support'],
      ['backchannel_logout_retried', 'ops_support', 'support'],
    ]);
    expect(events[0]?.details).toMatchObject({ kind: 'password_reset', recipient: 's…@example.org' });
    expect(JSON.stringify(events)).not.toContain('someone.private');
    const page = await sessions.support.get('/admin/platform?done=mail_retried');
    expect(page.body).toMatch(/<p class="notice" role="status">The message is queued again\.<\/p>/);
    // Nothing failed to retry any more: said, not a 500.
    const again = await sessions.support.post('/admin/platform/mail/retry', { id: String(failedMailId) });
    expect(again.statusCode).toBe(404);
    expect(text(again.body)).toContain('nothing to retry');
    expect(
      (await sessions.support.post('/admin/platform/mail/retry', { id: 'not-a-number' })).statusCode,
    ).toBe(404);
    const long = await sessions.support.post('/admin/platform/mail/retry', { id: '9'.repeat(5000) });
    expect(long.statusCode).toBe(400);
    expect(long.headers['content-type']).toMatch(/^text\/html/);
  });

  it('lets an owner rotate a key (the service idp keys rotate uses), after a recent second factor', async () => {
    const res = await sessions.owner.post('/admin/platform/keys/rotate', { alg: 'ES256' });
    expect(res.statusCode).toBe(303);
    const kid = new URL(res.headers.location as string, 'http://x').searchParams.get('kid');
    const keys = await listSigningKeys(t.database.db);
    expect(keys.find((k) => k.kid === kid)).toMatchObject({ algorithm: 'ES256', signing: true });
    const [event] = await latestAuditEvents(t.database.db, 1);
    expect(event).toMatchObject({
      action: 'key_rotated',
      subject: `key:${kid}`,
      details: { operator: 'ops_owner', algorithm: 'ES256' },
    });
    const page = await sessions.owner.get(res.headers.location as string);
    expect(text(page.body)).toContain(`A new key signs from now on: ${kid}.`);
    expect((await sessions.owner.post('/admin/platform/keys/rotate', { alg: 'HS256' })).statusCode).toBe(400);
    // Past the re-authentication window, the form asks for the second factor again and changes nothing.
    t.clock.advance(10 * 60_000);
    const count = (await listSigningKeys(t.database.db)).length;
    const late = await sessions.owner.post('/admin/platform/keys/rotate', { alg: 'RS256' });
    expect(late.statusCode).toBe(303);
    expect(late.headers.location).toBe('/admin/reauthenticate?return_to=%2Fadmin%2Fplatform');
    expect((await listSigningKeys(t.database.db)).length).toBe(count);
    await sessions.owner.reauthenticate();
    expect((await sessions.owner.post('/admin/platform/keys/rotate', { alg: 'RS256' })).statusCode).toBe(303);
  });

  it('lets an owner open and resolve an incident, shown by the public status', async () => {
    const bad = await sessions.owner.post('/admin/platform/incidents', { title: '  ', severity: 'minor' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('aria-invalid="true"');
    const opened = await sessions.owner.post('/admin/platform/incidents', {
      title: 'Mail is slow',
      message: 'The SMTP relay queues.',
      severity: 'major',
    });
    expect(opened.headers.location).toBe('/admin/platform?done=incident_opened');
    const status = (await t.app.inject('/api/v1/platform/status')).json();
    expect(status.incidents).toMatchObject([{ title: 'Mail is slow', severity: 'major', status: 'open' }]);
    const id = status.incidents[0].id as number;
    const page = await sessions.owner.get('/admin/platform');
    expect(formIds(page.body, '/admin/platform/incidents/resolve')).toEqual([id]);
    const resolved = await sessions.owner.post('/admin/platform/incidents/resolve', { id: String(id) });
    expect(resolved.headers.location).toBe('/admin/platform?done=incident_resolved');
    expect((await t.app.inject('/api/v1/platform/status')).json().incidents).toEqual([]);
    const events = await latestAuditEvents(t.database.db, 2);
    expect(events.map((e) => [e.action, e.subject])).toEqual([
      ['incident_opened', `incident:${id}`],
      ['incident_resolved', `incident:${id}`],
    ]);
    expect(
      (await sessions.owner.post('/admin/platform/incidents/resolve', { id: '999999' })).statusCode,
    ).toBe(404);
  });
});
