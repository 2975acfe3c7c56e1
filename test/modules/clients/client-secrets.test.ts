import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/modules/audit/audit.repository.js';
import type { ClientChangeRecord } from '../../../src/modules/clients/client-input.js';
import {
  addClientSecret,
  expireClientSecret,
  listClientSecrets,
  MAX_ACTIVE_CLIENT_SECRETS,
} from '../../../src/modules/clients/client-secret.service.js';
import { createClient, findClientDetails } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeClient, makeUser, mintCode, type TestClient } from '../../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../../helpers/http.js';

/*
 * Several valid secrets per client, each with its own expiry (the developer portal's rotation
 * without downtime): every endpoint that authenticates a client accepts each one until it
 * expires, through the instance's client cache (createTestApp runs with one, as production does).
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const ctx = () => depsOf(t).ctx;
const at = (iso: string) => new Date(iso);

async function exchangeStatus(client: TestClient, as: TestClient): Promise<number> {
  const user = await makeUser(t);
  return (await exchangeCode(t.app, as, await mintCode(t, client, user))).statusCode;
}

const status = async (path: string, as: TestClient, fields: Record<string, string>) =>
  (await postForm(t.app, path, fields, { authorization: basic(as) })).statusCode;
const revokeStatus = (as: TestClient) => status('/api/v1/oauth/revoke', as, { token: 'at_unknown' });
const introspectStatus = (as: TestClient) => status('/api/v1/oauth/introspect', as, { token: 'at_unknown' });
/** RFC 9126 §2: the PAR endpoint authenticates the client first; what it says of the request after does not matter here. */
const parStatus = (as: TestClient) =>
  status('/api/v1/oauth/par', as, { response_type: 'code', redirect_uri: as.redirectUri, scope: 'openid' });

const events: AuditEvent[] = [];
const audit = (change: ClientChangeRecord): AuditEvent => {
  const event = { at: t.clock.now(), actor: 'user:1', ...change };
  events.push(event);
  return event;
};

describe('several secrets of one client', () => {
  it('accepts each valid secret at every endpoint, and an expired one nowhere, through a warm cache', async () => {
    t.clock.set('2026-06-01T12:00:00Z');
    const first = await makeClient(t);
    expect(await exchangeStatus(first, first)).toBe(200); // the cache holds the row with one secret
    const added = await addClientSecret(t.database.db, ctx(), first.clientId, { audit });
    expect(added.client_secret).toMatch(/^sk_/);
    await t.sync();
    const second = { ...first, clientSecret: added.client_secret };
    for (const as of [first, second]) {
      expect(await exchangeStatus(first, as)).toBe(200);
      expect(await revokeStatus(as)).toBe(200);
      expect(await introspectStatus(as)).toBe(200);
      expect(await parStatus(as)).not.toBe(401);
    }

    const firstId = (await listClientSecrets(t.database.db, ctx(), first.clientId)).at(-1)?.id ?? 0;
    const expired = await expireClientSecret(t.database.db, ctx(), first.clientId, firstId, {
      at: at('2026-06-01T13:00:00Z'),
      audit,
    });
    expect(expired.expires_at).toBe('2026-06-01T13:00:00.000Z');
    await t.sync();
    // Warm the cache with the row that holds both, then let the clock pass the expiry alone.
    expect(await exchangeStatus(first, first)).toBe(200);
    t.clock.set('2026-06-01T12:59:59.999Z');
    expect(await revokeStatus(first)).toBe(200);
    t.clock.set('2026-06-01T13:00:00Z');
    expect(await exchangeStatus(first, first)).toBe(401);
    expect(await revokeStatus(first)).toBe(401);
    expect(await introspectStatus(first)).toBe(401);
    expect(await parStatus(first)).toBe(401);
    expect(await exchangeStatus(first, second)).toBe(200);
    expect(await parStatus(second)).not.toBe(401);
  });

  it('lists the valid secrets newest first, by hint, never the secret or its hash', async () => {
    t.clock.set('2026-06-02T00:00:00Z');
    const created = await createClient(t.database.db, ctx(), {
      name: 'Listed',
      siteUrl: 'https://listed.example',
      redirectUris: ['https://listed.example/cb'],
    });
    t.clock.set('2026-06-02T00:00:01Z');
    const added = await addClientSecret(t.database.db, ctx(), created.client_id, {
      expiresAt: at('2026-07-01T00:00:00Z'),
    });
    const list = await listClientSecrets(t.database.db, ctx(), created.client_id);
    expect(list).toEqual([
      {
        id: added.id,
        hint: added.client_secret.slice(-4),
        created_at: '2026-06-02T00:00:01.000Z',
        expires_at: '2026-07-01T00:00:00.000Z',
      },
      {
        id: expect.any(Number),
        hint: created.client_secret.slice(-4),
        created_at: '2026-06-02T00:00:00.000Z',
        expires_at: null,
      },
    ]);
    expect(JSON.stringify(list)).not.toMatch(/sk_|hash/);
    t.clock.set('2026-07-01T00:00:00Z');
    expect((await listClientSecrets(t.database.db, ctx(), created.client_id)).map((s) => s.id)).not.toContain(
      added.id,
    );
    await expect(listClientSecrets(t.database.db, ctx(), 'pk_unknown')).rejects.toMatchObject({
      error: 'not_found',
    });
  });

  it(`keeps at most ${MAX_ACTIVE_CLIENT_SECRETS} valid at once; an expired one frees its place`, async () => {
    t.clock.set('2026-06-03T00:00:00Z');
    const client = await makeClient(t);
    const ids: number[] = [];
    for (let i = 1; i < MAX_ACTIVE_CLIENT_SECRETS; i++) {
      ids.push((await addClientSecret(t.database.db, ctx(), client.clientId)).id);
    }
    await expect(addClientSecret(t.database.db, ctx(), client.clientId)).rejects.toMatchObject({
      error: 'invalid_request',
      fields: { secrets: expect.stringContaining(`at most ${MAX_ACTIVE_CLIENT_SECRETS}`) },
    });
    await expireClientSecret(t.database.db, ctx(), client.clientId, ids[0] as number, { at: t.clock.now() });
    await expect(addClientSecret(t.database.db, ctx(), client.clientId)).resolves.toMatchObject({
      client_secret: expect.stringMatching(/^sk_/),
    });
  });

  it('refuses an expiry not in the future, a public client, an unknown or deleted one', async () => {
    t.clock.set('2026-06-04T00:00:00Z');
    const client = await makeClient(t);
    await expect(
      addClientSecret(t.database.db, ctx(), client.clientId, { expiresAt: t.clock.now() }),
    ).rejects.toMatchObject({ error: 'invalid_request', fields: { expiresAt: expect.any(String) } });
    const pub = await createClient(t.database.db, ctx(), {
      name: 'Public',
      siteUrl: 'https://public.example',
      redirectUris: ['https://public.example/cb'],
      isPublic: true,
    });
    await expect(addClientSecret(t.database.db, ctx(), pub.client_id)).rejects.toMatchObject({
      error: 'invalid_request',
      description: expect.stringContaining('public'),
    });
    expect(await listClientSecrets(t.database.db, ctx(), pub.client_id)).toEqual([]);
    await expect(addClientSecret(t.database.db, ctx(), 'pk_unknown')).rejects.toMatchObject({
      error: 'not_found',
    });

    await t.database.db
      .updateTable('clients')
      .set({ deleted_at: t.clock.now() })
      .where('client_id', '=', client.clientId)
      .execute();
    await t.sync();
    await expect(addClientSecret(t.database.db, ctx(), client.clientId)).rejects.toMatchObject({
      error: 'not_found',
    });
    expect(await listClientSecrets(t.database.db, ctx(), client.clientId)).toEqual([]);
    // A deleted client is unknown to client authentication, even with its valid secret.
    expect(await revokeStatus(client)).toBe(401);
  });
});

describe('expireClientSecret', () => {
  it('will not leave a client without a secret, only brings an expiry forward, and takes a past time as now', async () => {
    t.clock.set('2026-06-05T00:00:00Z');
    const client = await makeClient(t);
    const [only] = await listClientSecrets(t.database.db, ctx(), client.clientId);
    if (!only) throw new Error('a secret is expected');
    await expect(
      expireClientSecret(t.database.db, ctx(), client.clientId, only.id, { at: t.clock.now() }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
      fields: { secrets: expect.stringContaining('add another') },
    });
    expect(await revokeStatus(client)).toBe(200);

    const next = await addClientSecret(t.database.db, ctx(), client.clientId, {
      expiresAt: at('2026-06-06T00:00:00Z'),
    });
    await expect(
      expireClientSecret(t.database.db, ctx(), client.clientId, next.id, { at: at('2026-06-07T00:00:00Z') }),
    ).rejects.toMatchObject({ error: 'invalid_request', fields: { at: expect.any(String) } });
    const now = await expireClientSecret(t.database.db, ctx(), client.clientId, only.id, {
      at: at('2020-01-01T00:00:00Z'),
    });
    expect(now.expires_at).toBe('2026-06-05T00:00:00.000Z');
    await t.sync();
    expect(await revokeStatus(client)).toBe(401);
    expect(await revokeStatus({ ...client, clientSecret: next.client_secret })).toBe(200);
    // Already expired: no longer one of its valid secrets.
    await expect(
      expireClientSecret(t.database.db, ctx(), client.clientId, only.id, { at: t.clock.now() }),
    ).rejects.toMatchObject({ error: 'not_found' });
    // The last one, but it has an expiry already: it may be brought forward.
    await expect(
      expireClientSecret(t.database.db, ctx(), client.clientId, next.id, { at: at('2026-06-05T12:00:00Z') }),
    ).resolves.toMatchObject({ expires_at: '2026-06-05T12:00:00.000Z' });
  });

  it("records each change in the audit log by the secret's id and hint, never the secret or its hash", async () => {
    t.clock.set('2026-06-06T00:00:00Z');
    events.length = 0;
    const client = await makeClient(t);
    const added = await addClientSecret(t.database.db, ctx(), client.clientId, {
      expiresAt: at('2026-06-09T00:00:00Z'),
      audit,
    });
    await expireClientSecret(t.database.db, ctx(), client.clientId, added.id, {
      at: at('2026-06-07T00:00:00Z'),
      audit,
    });
    expect(events.map(({ action, subject, details }) => ({ action, subject, details }))).toEqual([
      {
        action: 'client_secret_added',
        subject: `client:${client.clientId}`,
        details: {
          secret_id: added.id,
          hint: added.client_secret.slice(-4),
          expires_at: '2026-06-09T00:00:00.000Z',
        },
      },
      {
        action: 'client_secret_expired',
        subject: `client:${client.clientId}`,
        details: {
          secret_id: added.id,
          hint: added.client_secret.slice(-4),
          expires_at: '2026-06-07T00:00:00.000Z',
        },
      },
    ]);
    const stored = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'details'])
      .where('subject', '=', `client:${client.clientId}`)
      .orderBy('id')
      .execute();
    expect(stored.map((e) => e.action)).toEqual(['client_secret_added', 'client_secret_expired']);
    expect(JSON.stringify(stored)).not.toContain(added.client_secret);
    expect(JSON.stringify(stored)).not.toMatch(/hash/);
  });

  it("shows in the client's details the latest expiry among the secrets beside the newest", async () => {
    t.clock.set('2026-06-08T00:00:00Z');
    const client = await makeClient(t);
    const details = () => findClientDetails(t.database.db, ctx(), client.clientId);
    expect((await details())?.previous_secret_expires_at).toBeNull();
    const [first] = await listClientSecrets(t.database.db, ctx(), client.clientId);
    await addClientSecret(t.database.db, ctx(), client.clientId);
    await expireClientSecret(t.database.db, ctx(), client.clientId, first?.id ?? 0, {
      at: at('2026-06-08T06:00:00Z'),
    });
    expect((await details())?.previous_secret_expires_at).toBe('2026-06-08T06:00:00.000Z');
    t.clock.set('2026-06-08T06:00:00Z');
    expect((await details())?.previous_secret_expires_at).toBeNull();
  });
});
