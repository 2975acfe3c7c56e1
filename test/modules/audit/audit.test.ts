import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeCommand, prepareCommand } from '../../../src/cli/run-command.js';
import {
  AUDIT_TEXT_MAX_LENGTH,
  latestAuditEvents,
  recordAudit,
} from '../../../src/modules/audit/audit.repository.js';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { makeClient, makeUser } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * The audit log: who did what, to what, when and from where, for sign-ins (and failures),
 * consents, revocations, charges, and the operator's changes; append-only.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function lastEvents(count: number) {
  return (await latestAuditEvents(t.database.db, count)).map(({ actor, action, subject, ip, details }) => ({
    actor,
    action,
    subject,
    ip,
    details,
  }));
}

async function idp(argv: string[]): Promise<Record<string, unknown>> {
  const prepared = prepareCommand([...argv, '--json']);
  if ('exitCode' in prepared) throw new Error(prepared.stderr);
  const output = await executeCommand(prepared, { db: t.database.db, config: t.config, clock: t.clock });
  expect(output.exitCode, output.stderr).toBe(0);
  return JSON.parse(output.stdout) as Record<string, unknown>;
}

describe('the audit log', () => {
  it('records sign-ins and failed sign-ins with the address, never the password', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.submit('/signin', '/signin', { username: user.username, password: 'wrong password' });
    await browser.submit('/signin', '/signin', { username: user.username, password: user.password });
    expect(await lastEvents(2)).toEqual([
      {
        actor: 'anonymous',
        action: 'sign_in_failed',
        subject: `username:${user.username.toLowerCase()}`,
        ip: '127.0.0.1',
        details: { via: 'page', reason: 'wrong_credentials' },
      },
      {
        actor: `user:${user.id}`,
        action: 'sign_in',
        subject: `user:${user.id}`,
        ip: '127.0.0.1',
        details: { via: 'page' },
      },
    ]);
    const all = JSON.stringify(await latestAuditEvents(t.database.db, 1000));
    expect(all).not.toContain(user.password);
    expect(all).not.toContain('wrong password');
  });

  it('records a consent and the revocation of the app', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const browser = new Browser(t.app);
    await browser.submit('/signin', '/signin', { username: user.username, password: user.password });
    const authorize = `/api/v1/oauth/authorize?response_type=code&client_id=${client.clientId}&redirect_uri=${encodeURIComponent(client.redirectUri)}&scope=openid&state=s`;
    const allowed = await browser.submit(authorize, '/api/v1/oauth/authorize/decision', {
      decision: 'allow',
    });
    expect(allowed.statusCode).toBe(303);
    const revoked = await browser.submit('/account', '/account/apps/revoke', { client_id: client.clientId });
    expect(revoked.headers.location).toBe('/account?notice=revoked');
    expect(await lastEvents(2)).toEqual([
      expect.objectContaining({
        actor: `user:${user.id}`,
        action: 'consent_allowed',
        subject: `client:${client.clientId}`,
      }),
      expect.objectContaining({
        actor: `user:${user.id}`,
        action: 'app_revoked',
        subject: `client:${client.clientId}`,
      }),
    ]);
  });

  it('records a charge in the statement that makes it, and nothing for a refused one', async () => {
    const user = await makeUser(t);
    const shop = await makeClient(t, { wallet: true });
    await credit(t.database.db, { config: t.config, clock: t.clock }, { username: user.username, amount: 5 });
    const token = await insertAccessToken(t.database.db, {
      userId: user.id,
      clientId: shop.clientId,
      scopes: ['openid', 'wallet'],
      clock: t.clock,
    });
    const charge = (amount: number, key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/wallet/charge',
        headers: { authorization: `Bearer ${token}` },
        payload: { amount, currency: 'COIN', description: 'Sword', idempotency_key: key },
      });
    const made = await charge(2.5, 'audited-1');
    expect(made.statusCode).toBe(201);
    expect((await charge(50, 'audited-2')).statusCode).toBe(402);
    expect(await lastEvents(1)).toEqual([
      {
        actor: `client:${shop.clientId}`,
        action: 'wallet_charged',
        subject: `user:${user.id}`,
        ip: '127.0.0.1',
        details: { transaction: made.json().transaction.id, amount: 2.5 },
      },
    ]);
  });

  it("records the operator's changes to clients, keys and wallets", async () => {
    const user = await makeUser(t);
    const created = await idp([
      'clients',
      'create',
      '--name',
      'Audited',
      '--site-url',
      'https://audited.example',
      '--redirect-uri',
      'https://audited.example/cb',
    ]);
    await idp(['clients', 'update', String(created.client_id), '--wallet', 'true']);
    await idp(['clients', 'rotate-secret', String(created.client_id)]);
    const key = await idp(['keys', 'rotate']);
    await idp(['wallet', 'credit', user.username, '3']);
    const events = await lastEvents(5);
    expect(events.map((event) => [event.actor, event.action, event.subject])).toEqual([
      ['operator', 'client_created', `client:${created.client_id}`],
      ['operator', 'client_updated', `client:${created.client_id}`],
      ['operator', 'client_secret_rotated', `client:${created.client_id}`],
      ['operator', 'key_rotated', `key:${key.kid}`],
      ['operator', 'wallet_credited', `username:${user.username.toLowerCase()}`],
    ]);
    expect(JSON.stringify(events)).not.toContain(String(created.client_secret));
    expect(events[1]?.details).toEqual({ wallet: 'true' });
  });

  it('is shown by idp audit tail, oldest first', async () => {
    const tail = await idp(['audit', 'tail', '--limit', '3']);
    const events = tail.events as Array<{ id: number; at: string; action: string }>;
    expect(events).toHaveLength(3);
    expect(events[0]?.id).toBeLessThan(events[2]?.id ?? 0);
    expect(events[2]).toMatchObject({ action: 'wallet_credited', at: expect.stringMatching(/Z$/) });
  });

  it('keeps no field longer than its bound, whatever a request sends', async () => {
    const client = await makeClient(t);
    // A hint of almost 4 KiB (the longest OAuth parameter accepted) is kept as "other".
    const revoke = await postForm(
      t.app,
      '/api/v1/oauth/revoke',
      { token: 'at_unknown', token_type_hint: 'h'.repeat(4000) },
      { authorization: basic(client) },
    );
    expect(revoke.statusCode).toBe(200);
    expect((await lastEvents(1))[0]).toMatchObject({
      action: 'token_revoked',
      details: { token_type_hint: 'other' },
    });
    // A longer one is refused before anything is stored.
    const refused = await postForm(
      t.app,
      '/api/v1/oauth/revoke',
      { token: 'at_unknown', token_type_hint: 'h'.repeat(900_000) },
      { authorization: basic(client) },
    );
    expect(refused.statusCode).toBe(400);
    expect((await lastEvents(1))[0]).toMatchObject({ details: { token_type_hint: 'other' } });

    const long = 'x'.repeat(10_000);
    await recordAudit(t.database.db, {
      at: t.clock.now(),
      actor: long,
      action: 'token_revoked',
      subject: long,
      ip: long,
      details: {
        [long]: long,
        list: Array.from({ length: 1000 }, () => long),
        deep: { a: { b: { c: { d: long } } } },
      },
    });
    const [event] = await lastEvents(1);
    for (const field of [event?.actor, event?.subject, event?.ip])
      expect(String(field).length).toBeLessThanOrEqual(AUDIT_TEXT_MAX_LENGTH + 1);
    expect(JSON.stringify(event?.details).length).toBeLessThan(20 * (AUDIT_TEXT_MAX_LENGTH + 10) + 1000);
  });

  it('is append-only', async () => {
    await expect(sql`update audit_events set actor = 'someone else'`.execute(t.database.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`delete from audit_events`.execute(t.database.db)).rejects.toThrow(/append-only/);
  });
});
