import net from 'node:net';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BackchannelLogoutWorker,
  type LogoutOutcome,
  type LogoutWorkerOptions,
} from '../../../src/modules/backchannel/logout.worker.js';
import { addressAllowed } from '../../../src/modules/backchannel/logout-delivery.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../../src/modules/backchannel/logout-token.js';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { hiddenFields } from '../../helpers/browser.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf, makeUser, type TestClient } from '../../helpers/factories.js';
import { makeSite, signedIn, signInTo } from './backchannel.fixture.js';
import { LogoutSite } from './logout-site.js';

/*
 * Delivery of logout tokens (OIDC Back-Channel Logout 1.0 §2.4–2.5): a site on
 * 127.0.0.1 in this process receives them and checks each against the provider's JWKS. The worker's
 * passes are driven with `drain()` and its clock moved by hand, so backoff takes no real time.
 */

let t: TestApp;
const site = new LogoutSite();

function recordingLog() {
  const entries: Array<{ level: string; object: Record<string, unknown>; message: string }> = [];
  const add = (level: string) => (object: object, message: string) =>
    entries.push({ level, object: object as Record<string, unknown>, message });
  return { entries, info: add('info'), warn: add('warn') };
}

function worker(
  options: Partial<LogoutWorkerOptions> = {},
  log = recordingLog(),
  outcomes: LogoutOutcome[] = [],
) {
  return new BackchannelLogoutWorker(
    t.database.db,
    depsOf(t).ctx,
    log,
    { pollIntervalMs: 60_000, ...options },
    (o) => outcomes.push(o),
  );
}

/** A user signed in to `client` in a browser that then signs out: one logout queued. */
async function signOutOf(client: TestClient) {
  const user = await makeUser(t);
  const browser = await signedIn(t, user);
  const claims = await signInTo(t, browser, client);
  const page = await browser.get('/account');
  expect((await browser.post('/signout', hiddenFields(page.body, '/signout'))).statusCode).toBe(303);
  return { user, sid: claims.sid as string };
}

async function row(clientId: string) {
  return t.database.db
    .selectFrom('backchannel_logouts as l')
    .innerJoin('clients as c', 'c.id', 'l.client_pk')
    .selectAll('l')
    .where('c.client_id', '=', clientId)
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createTestApp();
  await site.start();
});
afterAll(async () => {
  await site.stop();
  await t.close();
});
beforeEach(async () => {
  await t.database.db.deleteFrom('backchannel_logouts').execute();
  site.received.length = 0;
  site.answers = [];
});
afterEach(() => vi.restoreAllMocks());

describe(`logout token delivery on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('POSTs a logout token that verifies against the JWKS, with every claim of §2.4 and no nonce', async () => {
    const client = await makeSite(t, site.url());
    const { user, sid } = await signOutOf(client);
    const outcomes: LogoutOutcome[] = [];
    expect(await worker({}, recordingLog(), outcomes).drain()).toBe(1);
    expect(outcomes).toEqual(['delivered']);
    const [received] = site.received;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/backchannel');
    expect(received?.contentType).toBe('application/x-www-form-urlencoded');
    const token = new URLSearchParams(received?.body).get('logout_token') as string;
    const jwks = createLocalJWKSet((await t.app.inject({ url: '/api/v1/oauth/jwks' })).json());
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: t.config.PUBLIC_URL,
      audience: client.clientId,
      typ: 'logout+jwt',
      currentDate: t.clock.now(),
      requiredClaims: ['iat', 'exp', 'jti', 'sub', 'sid', 'events'],
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(protectedHeader.kid).toEqual(expect.any(String));
    expect(payload).toMatchObject({ sub: String(user.id), sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } });
    expect(payload).not.toHaveProperty('nonce');
    expect((payload.exp as number) - (payload.iat as number)).toBe(120);
    expect(payload.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
    const stored = await row(client.clientId);
    expect(stored.delivered_at).toEqual(t.clock.now());
    expect(stored.attempts).toBe(1);
    // Delivered once: the next pass finds nothing due.
    expect(await worker().drain()).toBe(0);
    expect(site.received).toHaveLength(1);
  });

  it('retries a failure after the backoff, with a newly signed token', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 500 }];
    const log = recordingLog();
    const sender = worker({ baseBackoffMs: 30_000 }, log);
    expect(await sender.drain()).toBe(0);
    let stored = await row(client.clientId);
    expect(stored).toMatchObject({
      attempts: 1,
      delivered_at: null,
      failed_at: null,
      last_error: 'HTTP 500',
    });
    expect(stored.next_attempt_at).toEqual(new Date(t.clock.now().getTime() + 30_000));
    expect(log.entries.at(-1)?.message).toBe('backchannel logout: delivery failed; will retry');
    // The token that failed is not logged (a client id may contain any letters, so look for it).
    const failedToken = new URLSearchParams(site.received[0]?.body).get('logout_token') as string;
    expect(failedToken).toMatch(/^ey/);
    expect(JSON.stringify(log.entries)).not.toContain(failedToken.split('.')[2]);
    // Not due before its time.
    t.clock.advance(29_000);
    expect(await sender.drain()).toBe(0);
    expect(site.received).toHaveLength(1);
    t.clock.advance(1_000);
    expect(await sender.drain()).toBe(1);
    stored = await row(client.clientId);
    expect(stored.attempts).toBe(2);
    expect(stored.delivered_at).toEqual(t.clock.now());
    const [first, second] = site.received.map((r) =>
      decodeJwt(new URLSearchParams(r.body).get('logout_token') ?? ''),
    );
    expect(second?.jti).not.toBe(first?.jti);
    expect((second?.iat as number) - (first?.iat as number)).toBe(30);
  });

  it('retries a 202 and then gives up on it like any failure: only 200 and 204 are delivered (§2.8)', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 202 }, { status: 202 }];
    const outcomes: LogoutOutcome[] = [];
    const sender = worker({ maxAttempts: 2, baseBackoffMs: 1_000 }, recordingLog(), outcomes);
    expect(await sender.drain()).toBe(0);
    expect(await row(client.clientId)).toMatchObject({
      attempts: 1,
      delivered_at: null,
      last_error: 'HTTP 202',
    });
    t.clock.advance(1_000);
    expect(await sender.drain()).toBe(0);
    expect(outcomes).toEqual(['retry', 'given_up']);
    expect(await row(client.clientId)).toMatchObject({
      attempts: 2,
      delivered_at: null,
      failed_at: t.clock.now(),
      last_error: 'HTTP 202',
    });
    expect(site.received).toHaveLength(2);
  });

  it('counts a 204 as delivered', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 204 }];
    const outcomes: LogoutOutcome[] = [];
    expect(await worker({}, recordingLog(), outcomes).drain()).toBe(1);
    expect(outcomes).toEqual(['delivered']);
    expect((await row(client.clientId)).delivered_at).toEqual(t.clock.now());
  });

  it('never follows a redirect: a 302 is a failure, and its Location is not requested', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 302, headers: { location: site.url('/elsewhere') } }];
    expect(await worker().drain()).toBe(0);
    expect(site.received.map((r) => r.path)).toEqual(['/backchannel']);
    expect((await row(client.clientId)).last_error).toBe('HTTP 302 (redirects are not followed)');
  });

  it('refuses a private address before any connection, and a loopback name resolving elsewhere', async () => {
    const privateSite = await makeSite(t, 'https://logout.site.test/bc', 'Private');
    const rebound = await makeSite(t, `http://localhost:${new URL(site.url()).port}/bc`, 'Rebound');
    await signOutOf(privateSite);
    await signOutOf(rebound);
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    const asked: string[] = [];
    const resolve = async (hostname: string) => {
      asked.push(hostname);
      return [{ address: hostname === 'localhost' ? '192.168.1.20' : '10.1.2.3', family: 4 }];
    };
    expect(await worker({ resolve }).drain()).toBe(0);
    expect(asked.sort()).toEqual(['localhost', 'logout.site.test']);
    // Sockets to anything but the test database (whose pool may open one meanwhile): none.
    const databasePort = usingPostgres
      ? Number(new URL(process.env.TEST_DATABASE_URL ?? '').port || 5432)
      : -1;
    const opened = connect.mock.calls
      .map(([first]) => {
        const options = (Array.isArray(first) ? first[0] : first) as { port?: unknown } | number | string;
        return Number(typeof options === 'object' ? options?.port : options);
      })
      .filter((port) => port !== databasePort);
    expect(opened).toEqual([]);
    expect(site.received).toHaveLength(0);
    expect((await row(privateSite.clientId)).last_error).toMatch(
      /^refused: logout\.site\.test resolves to 10\.1\.2\.3/,
    );
    expect((await row(rebound.clientId)).last_error).toMatch(
      /^refused: localhost resolves to 192\.168\.1\.20/,
    );
  });

  it('checks addresses: loopback only for loopback hosts, public only for the others', () => {
    const v4 = (address: string) => ({ address, family: 4 });
    const v6 = (address: string) => ({ address, family: 6 });
    for (const bad of [
      '10.0.0.1',
      '172.16.5.4',
      '192.168.0.1',
      '127.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
    ])
      expect(addressAllowed('rp.example', v4(bad)), bad).toBe(false);
    for (const bad of ['::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1'])
      expect(addressAllowed('rp.example', v6(bad)), bad).toBe(false);
    expect(addressAllowed('rp.example', v4('93.184.216.34'))).toBe(true);
    expect(addressAllowed('rp.example', v6('2606:2800:220:1:248:1893:25c8:1946'))).toBe(true);
    expect(addressAllowed('localhost', v4('127.0.0.1'))).toBe(true);
    expect(addressAllowed('localhost', v6('::1'))).toBe(true);
    expect(addressAllowed('localhost', v4('93.184.216.34'))).toBe(false);
    expect(addressAllowed('127.0.0.1', v4('10.0.0.1'))).toBe(false);
  });

  it('gives up after the last attempt: logged, audited and counted, never retried', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 400 }, { status: 503 }];
    const log = recordingLog();
    const outcomes: LogoutOutcome[] = [];
    const sender = worker({ maxAttempts: 2, baseBackoffMs: 1_000 }, log, outcomes);
    await sender.drain();
    t.clock.advance(1_000);
    await sender.drain();
    const stored = await row(client.clientId);
    expect(stored.failed_at).toEqual(t.clock.now());
    expect(stored.last_error).toBe('HTTP 503');
    expect(outcomes).toEqual(['retry', 'given_up']);
    expect(log.entries.at(-1)).toMatchObject({
      level: 'warn',
      message: 'backchannel logout: delivery failed; given up',
    });
    const audit = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'backchannel_logout_failed')
      .where('subject', '=', `client:${client.clientId}`)
      .executeTakeFirstOrThrow();
    expect(audit.actor).toBe('system');
    expect(audit.details).toMatchObject({ attempts: 2, error: 'HTTP 503', reason: 'sign_out' });
    t.clock.advance(3_600_000);
    expect(await sender.drain()).toBe(0);
    expect(site.received).toHaveLength(2);
  });

  it('gives up on a logout still failing 12 hours after its session ended, whatever its attempts', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    site.answers = [{ status: 500 }, { status: 500 }];
    const outcomes: LogoutOutcome[] = [];
    const sender = worker({}, recordingLog(), outcomes);
    await sender.drain();
    t.clock.advance(12 * 3600_000);
    await sender.drain();
    expect(outcomes).toEqual(['retry', 'given_up']);
    expect(await row(client.clientId)).toMatchObject({ attempts: 2, failed_at: t.clock.now() });
  });

  it('sends nothing to a client whose URI was removed after the logout was queued', async () => {
    const client = await makeSite(t, site.url());
    await signOutOf(client);
    await updateClient(t.database.db, depsOf(t).ctx, client.clientId, { backchannelLogoutUri: '' });
    const outcomes: LogoutOutcome[] = [];
    expect(await worker({}, recordingLog(), outcomes).drain()).toBe(0);
    expect(outcomes).toEqual(['dropped']);
    expect(site.received).toHaveLength(0);
    expect((await row(client.clientId)).failed_at).not.toBeNull();
  });

  it('two workers passing at once deliver each logout once', async () => {
    const clients = [];
    for (let i = 0; i < 6; i++) clients.push(await makeSite(t, site.url(`/bc${i}`), `Site ${i}`));
    for (const client of clients) await signOutOf(client);
    const [a, b] = [worker({ batchSize: 2 }), worker({ batchSize: 2 })];
    const [fromA, fromB] = await Promise.all([a.drain(), b.drain()]);
    expect(fromA + fromB).toBe(6);
    expect(site.received.map((r) => r.path).sort()).toEqual(clients.map((_, i) => `/bc${i}`).sort());
  });
});
