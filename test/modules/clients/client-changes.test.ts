import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import type { AuditEvent } from '../../../src/modules/audit/audit.repository.js';
import type { ClientChangeRecord } from '../../../src/modules/clients/client-input.js';
import {
  ClientInputError,
  createClient,
  findClientDetails,
  rotateClientSecret,
  searchClients,
  updateClient,
} from '../../../src/modules/clients/clients.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

/*
 * What the console asks of the clients service beyond the CLI: each problem named by its field,
 * an audit event in the change's own transaction with the settings before and after (never a
 * secret), search, and a client's page with its running overlap.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };
/** As the console's operatorAuditEvent puts it: before and after among the details. */
const audit = ({ action, subject, before, after, details }: ClientChangeRecord): AuditEvent => ({
  at: clock.now(),
  actor: 'operator:7',
  action,
  subject,
  details: { ...(before && { before }), ...(after && { after }), ...details },
});

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const events = () =>
  database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'subject', 'details'])
    .orderBy('id')
    .execute();

const shop = {
  name: 'Shop',
  siteUrl: 'https://shop.example',
  redirectUris: ['https://shop.example/cb'],
};

describe('field errors', () => {
  it('names each refused field of a new client, and the description is as the CLI prints it', async () => {
    const error = await createClient(database.db, ctx, {
      name: ' ',
      siteUrl: 'ftp://x',
      redirectUris: ['https://shop.example/cb#frag'],
      logoUri: 'http://example.com/logo.png',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientInputError);
    expect(error).toMatchObject({ status: 400, error: 'invalid_request' });
    const fields = (error as ClientInputError).fields;
    expect(Object.keys(fields).sort()).toEqual(['logoUri', 'name', 'redirectUris', 'siteUrl']);
    expect(fields.name).toBe('name must not be empty');
    expect((error as ClientInputError).description).toContain('name must not be empty');
  });

  it('names the field of a refused change, and changes nothing', async () => {
    const { client_id } = await createClient(database.db, ctx, shop);
    const refused = async (input: Parameters<typeof updateClient>[3]) =>
      (
        (await updateClient(database.db, ctx, client_id, input, { audit }).catch(
          (e: unknown) => e,
        )) as ClientInputError
      ).fields;
    expect(await refused({ addRedirectUris: ['http://shop.example/cb2'] })).toHaveProperty('redirectUris');
    expect(await refused({ removeRedirectUris: ['https://shop.example/cb'] })).toHaveProperty('redirectUris');
    expect(await refused({ addPostLogoutRedirectUris: ['nope'] })).toHaveProperty('postLogoutRedirectUris');
    expect(await refused({ backchannelLogoutUri: 'http://example.com/bc' })).toHaveProperty(
      'backchannelLogoutUri',
    );
    expect(await refused({ idTokenAlg: 'HS256' as 'RS256' })).toHaveProperty('idTokenAlg');
    expect(await refused({ siteUrl: 'not a url' })).toHaveProperty('siteUrl');
    expect((await findClientDetails(database.db, ctx, client_id))?.redirect_uris).toEqual(shop.redirectUris);
    expect((await events()).filter((e) => e.subject === `client:${client_id}`)).toEqual([]);
  });

  it('a new https site URL is refused while a custom-scheme redirect URI stays', async () => {
    const { client_id } = await createClient(database.db, ctx, {
      name: 'Native',
      siteUrl: 'http://127.0.0.1:8080',
      redirectUris: ['com.example.app:/cb'],
    });
    const error = (await updateClient(database.db, ctx, client_id, {
      siteUrl: 'https://native.example',
    }).catch((e: unknown) => e)) as ClientInputError;
    expect(error.fields.siteUrl).toContain('custom scheme');
    const moved = await updateClient(database.db, ctx, client_id, { siteUrl: 'http://localhost:9000' });
    expect(moved.site_url).toBe('http://localhost:9000');
  });
});

describe('audit events of changes', () => {
  it('records a creation, an edit, a rotation, a disable and an enable with before and after, never a secret', async () => {
    clock.set('2026-05-02T00:00:00Z');
    const created = await createClient(database.db, ctx, { ...shop, name: 'Audited' }, { audit });
    await updateClient(
      database.db,
      ctx,
      created.client_id,
      { name: 'Audited Two', wallet: true, addRedirectUris: ['https://shop.example/cb2'] },
      { audit },
    );
    // Nothing changed: nothing recorded.
    await updateClient(database.db, ctx, created.client_id, { name: 'Audited Two' }, { audit });
    const rotated = await rotateClientSecret(database.db, ctx, created.client_id, {
      overlapSeconds: 3600,
      audit,
    });
    await updateClient(database.db, ctx, created.client_id, { disabled: true }, { audit });
    await updateClient(database.db, ctx, created.client_id, { disabled: false }, { audit });

    const mine = (await events()).filter((e) => e.subject === `client:${created.client_id}`);
    expect(mine.map((e) => e.action)).toEqual([
      'client_created',
      'client_updated',
      'client_secret_rotated',
      'client_disabled',
      'client_enabled',
    ]);
    expect(mine.every((e) => e.actor === 'operator:7')).toBe(true);
    expect(mine[0]?.details).toMatchObject({ after: { name: 'Audited', wallet: false } });
    expect(mine[1]?.details).toEqual({
      before: { name: 'Audited', wallet: false, redirect_uris: ['https://shop.example/cb'] },
      after: {
        name: 'Audited Two',
        wallet: true,
        redirect_uris: ['https://shop.example/cb', 'https://shop.example/cb2'],
      },
    });
    expect(mine[2]?.details).toEqual({
      overlap_seconds: 3600,
      previous_secret_expires_at: '2026-05-02T01:00:00.000Z',
      secret_id: expect.any(Number),
      hint: rotated.client_secret.slice(-4),
    });
    expect(mine[3]?.details).toEqual({ before: { disabled: false }, after: { disabled: true } });
    const text = JSON.stringify(mine);
    expect(text).not.toContain(created.client_secret);
    expect(text).not.toContain(rotated.client_secret);
    expect(text).not.toMatch(/secret_hash|sk_/);
  });

  it('a change whose audit event fails is rolled back with it', async () => {
    const created = await createClient(database.db, ctx, { ...shop, name: 'Rollback' });
    const failing = (): AuditEvent => {
      throw new Error('audit refused');
    };
    await expect(
      updateClient(database.db, ctx, created.client_id, { name: 'Changed' }, { audit: failing }),
    ).rejects.toThrow('audit refused');
    await expect(
      rotateClientSecret(database.db, ctx, created.client_id, { overlapSeconds: 60, audit: failing }),
    ).rejects.toThrow('audit refused');
    const details = await findClientDetails(database.db, ctx, created.client_id);
    expect(details).toMatchObject({ name: 'Rollback', previous_secret_expires_at: null });
  });
});

describe('searchClients and findClientDetails', () => {
  it('finds by part of the name (any case) or the start of the client_id, newest first', async () => {
    const a = await createClient(database.db, ctx, { ...shop, name: 'Zebra Books' });
    const b = await createClient(database.db, ctx, { ...shop, name: 'zebra 100%_done' });
    expect((await searchClients(database.db, 'ZEBRA')).map((c) => c.client_id)).toEqual([
      b.client_id,
      a.client_id,
    ]);
    expect((await searchClients(database.db, '100%_')).map((c) => c.client_id)).toEqual([b.client_id]);
    expect((await searchClients(database.db, '%')).map((c) => c.client_id)).toEqual([b.client_id]);
    expect((await searchClients(database.db, a.client_id.slice(0, 12))).map((c) => c.client_id)).toContain(
      a.client_id,
    );
    expect((await searchClients(database.db, '')).length).toBeGreaterThanOrEqual(2);
    expect(await searchClients(database.db, 'no such app at all')).toEqual([]);
  });

  it('shows until when the replaced secret works, and nothing once that has passed', async () => {
    clock.set('2026-05-03T00:00:00Z');
    const created = await createClient(database.db, ctx, { ...shop, name: 'Overlap' });
    await rotateClientSecret(database.db, ctx, created.client_id, { overlapSeconds: 60 });
    const details = await findClientDetails(database.db, ctx, created.client_id);
    expect(details?.previous_secret_expires_at).toBe('2026-05-03T00:01:00.000Z');
    expect(JSON.stringify(details)).not.toMatch(/hash/);
    clock.set('2026-05-03T00:01:00Z');
    expect(
      (await findClientDetails(database.db, ctx, created.client_id))?.previous_secret_expires_at,
    ).toBeNull();
    expect(await findClientDetails(database.db, ctx, 'pk_unknown')).toBeUndefined();
  });
});
