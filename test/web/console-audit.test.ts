import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/modules/audit/audit.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser } from '../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { usingPostgres } from '../helpers/database.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../helpers/factories.js';
import { unescapeHtml } from '../helpers/html.js';

/*
 * GET /admin/audit and its exports: the filters (operator, user, client, action, time), the
 * usernames and client names shown instead of ids, keyset pages, the CSV (RFC 4180, formulas made
 * text) and JSON downloads with the same filters, and who may read them.
 */

let t: TestApp;
let auditor: ConsoleSession;
let victim: TestUser;
let client: TestClient;

beforeAll(async () => {
  t = await createTestApp();
  auditor = await enterConsole(t, await makeOperator(t, 'auditor', { username: 'audrey_aud' }));
  victim = await makeUser(t, { username: 'victim_vic' });
  client = await makeClient(t, { name: 'Formula =SUM(A1) "Shop"' });
  const db = t.database.db;
  const at = t.clock.now();
  const ago = (minutes: number) => new Date(at.getTime() - minutes * 60_000);
  await recordAudit(db, {
    at: ago(120),
    actor: `user:${victim.id}`,
    action: 'consent_allowed',
    subject: `client:${client.clientId}`,
    ip: '192.0.2.1',
  });
  await recordAudit(db, {
    at: ago(30),
    actor: 'anonymous',
    action: 'sign_in_failed',
    subject: 'username:=cmd|"/c calc"!A1',
    ip: '192.0.2.2',
    details: { note: '=HYPERLINK("http://x")\nsecond "line"' },
  });
  for (let i = 0; i < 55; i += 1)
    await recordAudit(db, {
      at: ago(10),
      actor: `user:${victim.id}`,
      action: 'token_revoked',
      ip: '192.0.2.3',
    });
});
afterAll(() => t.close());

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

describe(`the console's audit log on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends a browser without a session to sign in', async () => {
    const res = await new Browser(t.app).get('/admin/audit?user=victim_vic');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Faudit%3Fuser%3Dvictim_vic');
    expect((await new Browser(t.app).get('/admin/audit/export.csv')).statusCode).toBe(302);
  });

  it('shows usernames and client names, with filter links, newest first, a page of 50', async () => {
    const res = await auditor.get('/admin/audit');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // The operators are offered as the operator filter's suggestions.
    expect(res.body).toContain('list="audit-operator-names"');
    expect(res.body).toContain('<option value="audrey_aud"></option>');
    expect(text(res.body)).toContain('victim_vic user:');
    expect(res.body.match(/<tr>/g)).toHaveLength(51);
    const older = /href="(\/admin\/audit\?before=\d+)"/.exec(res.body)?.[1];
    expect(older).toBeDefined();
    const next = await auditor.get(unescapeHtml(older as string));
    expect(next.statusCode).toBe(200);
    const page = text(next.body);
    expect(page).toContain('consent_allowed');
    expect(page).toContain(`Formula =SUM(A1) "Shop" client:${client.clientId}`);
    expect(next.body).toContain('href="/admin/audit?user=victim_vic"');
    expect(next.body).toContain(`href="/admin/audit?client=${client.clientId}"`);
    expect(next.body).toContain('href="/admin/audit"');
  });

  it('filters by user, client, action and time, and keeps the filters in the export links', async () => {
    const byClient = await auditor.get(`/admin/audit?client=${client.clientId}`);
    expect(byClient.statusCode).toBe(200);
    expect(byClient.body.match(/<tr>/g)).toHaveLength(2);
    expect(byClient.body).toContain(`href="/admin/audit/export.csv?client=${client.clientId}"`);
    const failed = await auditor.get('/admin/audit?action=sign_in_failed&since=1h');
    expect(failed.body.match(/<tr>/g)).toHaveLength(2);
    expect(text(failed.body)).toContain('username:=cmd|"/c calc"!A1');
    const none = await auditor.get('/admin/audit?user=victim_vic&until=2020-01-01');
    expect(none.statusCode).toBe(200);
    expect(text(none.body)).toContain('No events match these filters.');
  });

  it('names the filter that is wrong, with 400, in English and Russian', async () => {
    const res = await auditor.get('/admin/audit?user=nobody_known&since=soon');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('aria-invalid="true"');
    expect(text(res.body)).toContain('No account has this username or id.');
    expect(res.body).toContain('value="nobody_known"');
    const ru = await auditor.get('/admin/audit?since=soon&lang=ru');
    expect(ru.statusCode).toBe(400);
    expect(text(ru.body)).toContain('Укажите дату и время в UTC');
    const export400 = await auditor.get('/admin/audit/export.csv?action=Not%20one');
    expect(export400.statusCode).toBe(400);
  });

  it('exports CSV with RFC 4180 quoting and formulas made text', async () => {
    const res = await auditor.get('/admin/audit/export.csv?since=1h&action=sign_in_failed');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="audit-log-\d{8}T\d{6}Z\.csv"$/,
    );
    expect(res.headers['x-export-truncated']).toBe('false');
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('id,at,actor,actor_name,action,subject,subject_name,ip,details');
    expect(res.body).toContain(',anonymous,,sign_in_failed,"username:=cmd|""/c calc""!A1",,192.0.2.2,');
    expect(res.body).toContain('"{""note"":""=HYPERLINK(\\""http://x\\"")\\nsecond \\""line\\""""}"');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
  });

  it('neutralises a username or client name that starts with = in the CSV', async () => {
    const res = await auditor.get(`/admin/audit/export.csv?client=${client.clientId}`);
    expect(res.statusCode).toBe(200);
    // The client's name starts with "Formula", the subject_name cell: quoted as it holds quotes.
    expect(res.body).toContain(`,client:${client.clientId},"Formula =SUM(A1) ""Shop""",`);
    const named = await makeClient(t, { name: '=2+5' });
    await recordAudit(t.database.db, {
      at: t.clock.now(),
      actor: `client:${named.clientId}`,
      action: 'wallet_charged',
    });
    const again = await auditor.get(`/admin/audit/export.csv?client=${named.clientId}`);
    expect(again.body).toContain(`,client:${named.clientId},'=2+5,wallet_charged,`);
    // A recorded value that starts with = and holds quotes and a line break: text, quoted, whole.
    await recordAudit(t.database.db, {
      at: t.clock.now(),
      actor: '=cmd|"/c calc"\r\n!A1',
      action: 'sign_in_unlocked',
      details: { reason: '=1+1' },
    });
    const raw = await auditor.get('/admin/audit/export.csv?action=sign_in_unlocked');
    // One record, its line break inside the quoted field (RFC 4180 §2.6).
    expect(raw.body).toMatch(
      /^id,[^\r\n]+\r\n\d+,[^,]+,"'=cmd\|""\/c calc""\r\n!A1",,sign_in_unlocked,,,,"{""reason"":""=1\+1""}"\r\n$/,
    );
  });

  it('exports JSON with the names beside the references and the filters used', async () => {
    const res = await auditor.get(`/admin/audit/export.json?user=${victim.id}&action=consent_allowed`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="audit-log-\d{8}T\d{6}Z\.json"$/,
    );
    const body = res.json();
    expect(body).toMatchObject({
      max_events: 10000,
      truncated: false,
      filters: { user: String(victim.id), action: 'consent_allowed' },
    });
    expect(body.events).toEqual([
      expect.objectContaining({
        actor: `user:${victim.id}`,
        actor_name: 'victim_vic',
        subject: `client:${client.clientId}`,
        subject_name: 'Formula =SUM(A1) "Shop"',
      }),
    ]);
  });

  it('is readable by every role', async () => {
    for (const role of ['support', 'owner'] as const) {
      const session = await enterConsole(t, await makeOperator(t, role));
      expect((await session.get('/admin/audit')).statusCode, role).toBe(200);
      expect((await session.get('/admin/audit/export.json')).statusCode, role).toBe(200);
    }
  });
});
