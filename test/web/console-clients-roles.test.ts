import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findClientByClientId } from '../../src/modules/clients/clients.repository.js';
import type { ConsoleRole } from '../../src/modules/operators/roles.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { usingPostgres } from '../helpers/database.js';
import { makeClient, type TestClient } from '../helpers/factories.js';

/*
 * Who may do what with applications in the console, route by route: a support operator and an
 * auditor read the list and each page but are refused every change (403, nothing changed, no
 * audit event), and their pages offer no change; an owner may do all.
 */
let t: TestApp;
let client: TestClient;
const sessions = new Map<ConsoleRole, ConsoleSession>();

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t, { name: 'Role Shop' });
  for (const role of ['owner', 'support', 'auditor'] as const)
    sessions.set(role, await enterConsole(t, await makeOperator(t, role)));
});
afterAll(() => t.close());

const as = (role: ConsoleRole) => sessions.get(role) as ConsoleSession;
const path = () => `/admin/clients/${client.clientId}`;

const READS = () => ['/admin/clients', '/admin/clients?q=role', path()];
const CHANGES = (): Array<[string, Record<string, string>]> => [
  [
    '/admin/clients',
    { name: 'Sneaky', site_url: 'https://s.example', redirect_uris: 'https://s.example/cb' },
  ],
  [
    path(),
    { name: 'Renamed', site_url: 'https://site.example', redirect_uris: 'https://site.example/callback' },
  ],
  [`${path()}/rotate-secret`, { overlap: '3600' }],
  [`${path()}/disable`, {}],
  [`${path()}/enable`, {}],
];

describe(`roles on the console's applications on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  for (const role of ['support', 'auditor'] as const) {
    it(`${role}: reads every page, without any form that changes`, async () => {
      for (const url of READS()) {
        const res = await as(role).get(url);
        expect(res.statusCode, url).toBe(200);
        expect(res.body, url).not.toMatch(/method="post" action="\/admin\/clients/);
      }
      expect((await as(role).get('/admin/clients')).body).not.toContain('href="/admin/clients/new"');
      expect((await as(role).get('/admin/clients/new')).statusCode).toBe(403);
    });

    it(`${role}: is refused every change with 403, and nothing changes`, async () => {
      const before = await findClientByClientId(t.database.db, client.clientId);
      const clients = (await t.database.db.selectFrom('clients').select('id').execute()).length;
      for (const [url, fields] of CHANGES()) {
        const res = await as(role).post(url, fields);
        expect(res.statusCode, url).toBe(403);
        expect(res.body).toContain('Not for your role');
      }
      expect(await findClientByClientId(t.database.db, client.clientId)).toEqual(before);
      expect((await t.database.db.selectFrom('clients').select('id').execute()).length).toBe(clients);
      const events = await t.database.db
        .selectFrom('audit_events')
        .select('action')
        .where('action', 'like', 'client_%')
        .execute();
      expect(events).toEqual([]);
    });
  }

  it('lists and searches applications by name or client_id, for every role', async () => {
    const other = await makeClient(t, { name: 'Zebra Garden' });
    for (const role of ['owner', 'support', 'auditor'] as const) {
      const all = await as(role).get('/admin/clients');
      expect(all.body).toContain(`href="/admin/clients/${other.clientId}"`);
      expect(all.body).toContain(`href="/admin/clients/${client.clientId}"`);
    }
    const byName = await as('auditor').get('/admin/clients?q=zebra');
    expect(byName.body).toContain(other.clientId);
    expect(byName.body).not.toContain(client.clientId);
    const byId = await as('support').get(`/admin/clients?q=${client.clientId.slice(0, 14)}`);
    expect(byId.body).toContain(client.clientId);
    expect(byId.body).not.toContain(other.clientId);
    const none = await as('owner').get(`/admin/clients?q=${encodeURIComponent('%_<x>')}`);
    expect(none.statusCode).toBe(200);
    expect(none.body).toContain('No application matches.');
    expect(none.body).toContain('value="%_&lt;x&gt;"');
  });

  it('owner: sees the forms and may make each change', async () => {
    const page = await as('owner').get(path());
    for (const action of ['', '/rotate-secret', '/disable'])
      expect(page.body).toContain(`action="${path()}${action}"`);
    const changes = CHANGES();
    const statuses: number[] = [];
    for (const [url, fields] of changes) statuses.push((await as('owner').post(url, fields)).statusCode);
    expect(statuses).toEqual([201, 303, 200, 303, 303]);
  });
});
