import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import {
  addCoOwner,
  createOwnedApp,
  deleteOwnedApp,
  requestWallet,
} from '../../../src/modules/developer-apps/apps.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { unescapeHtml } from '../../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../../helpers/console.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf, makeClient, makeUser, type TestUser } from '../../helpers/factories.js';

/*
 * The console's side of applications that site owners registered: an application's page shows
 * how it was registered, its owners, whether it awaits approval (with the button that approves it)
 * and the wallet right its owners asked for (with the button that grants it); the list filters
 * those awaiting approval. Approving and granting need `clients`, are audited as the operator and
 * mailed to the owners.
 */
let t: TestApp;
let owner: ConsoleSession;
let support: ConsoleSession;
let ownerId = 0;

beforeAll(async () => {
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '86400' } });
  const operator = await makeOperator(t, 'owner', { username: 'rita_owner' });
  ownerId = operator.user.id;
  owner = await enterConsole(t, operator);
  support = await enterConsole(t, await makeOperator(t, 'support', { username: 'sam_support' }));
});
afterAll(() => t.close());

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

async function portalApp(who: TestUser, name: string) {
  const { db, ctx } = depsOf(t);
  return createOwnedApp(db, ctx, {
    ownerUserId: who.id,
    input: { name, siteUrl: 'https://dev.example', redirectUris: ['https://dev.example/cb'] },
    via: 'portal',
  });
}

const auditOf = (clientId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'details'])
    .where('subject', '=', `client:${clientId}`)
    .orderBy('id')
    .execute();

describe(`reviewing applications in the console on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('shows how an application was registered, its owners, and that it awaits approval', async () => {
    const dev = await makeUser(t);
    const helper = await makeUser(t);
    const app = await portalApp(dev, 'Awaiting Site');
    await addCoOwner(depsOf(t).db, depsOf(t).ctx, dev.id, app.client_id, helper.username);
    const page = await owner.get(`/admin/clients/${app.client_id}`);
    expect(page.statusCode).toBe(200);
    const shown = text(page.body);
    expect(shown).toContain('by its owner in the developer portal');
    expect(shown).toContain(`@${dev.username} (owner)`);
    expect(shown).toContain(`@${helper.username} (co-owner)`);
    expect(shown).toContain('Awaiting approval');
    expect(page.body).toContain(`action="/admin/clients/${app.client_id}/approve"`);

    const ru = await owner.get(`/admin/clients/${app.client_id}?lang=ru`);
    expect(text(ru.body)).toContain('Ждёт одобрения');
    expect(text(ru.body)).toContain('владельцем на портале разработчика');
    expect(text(ru.body)).toMatch(/Одобрить приложение/);
    await owner.get(`/admin/clients/${app.client_id}?lang=en`);
  });

  it("shows an operator's client as approved, with no owners and no button", async () => {
    const made = await makeClient(t, { name: 'Operator Site' });
    const page = await owner.get(`/admin/clients/${made.clientId}`);
    const shown = text(page.body);
    expect(shown).toContain('by an operator (the console or the CLI)');
    expect(shown).toContain('none: only operators manage it');
    expect(shown).toMatch(/Approved on /);
    expect(page.body).not.toContain('/approve"');
  });

  it('lists the applications awaiting approval, and approves one: audited, mailed, gone from the list', async () => {
    const dev = await makeUser(t);
    const app = await portalApp(dev, 'Pending Shop');
    const approvedAlready = await makeClient(t, { name: 'Approved Shop' });
    const list = await owner.get('/admin/clients?pending=1');
    expect(list.statusCode).toBe(200);
    expect(text(list.body)).toContain('Applications awaiting approval');
    expect(list.body).toContain(app.client_id);
    expect(list.body).not.toContain(approvedAlready.clientId);
    expect((await owner.get('/admin/clients')).body).toContain('href="/admin/clients?pending=1"');

    await owner.reauthenticate();
    const res = await owner.post(`/admin/clients/${app.client_id}/approve`);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/admin/clients/${app.client_id}?done=approved`);
    const page = await owner.get(res.headers.location as string);
    expect(text(page.body)).toContain('The application is approved');
    expect(page.body).not.toContain('/approve"');
    expect((await findClientByClientId(t.database.db, app.client_id))?.approvedAt).toEqual(t.clock.now());
    expect((await auditOf(app.client_id)).at(-1)).toMatchObject({
      actor: `operator:${ownerId}`,
      action: 'client_approved',
      details: { operator: 'rita_owner', before: { approved: false }, after: { approved: true } },
    });
    const mail = await t.database.db
      .selectFrom('mail_outbox')
      .select('text_body')
      .where('user_id', '=', dev.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(mail.text_body).toContain('The operators of the service: approved the application');
    expect((await owner.get('/admin/clients?pending=1')).body).not.toContain(app.client_id);
  });

  it('shows the wallet request and grants it: the right given, the request cleared, audited', async () => {
    const dev = await makeUser(t);
    const app = await portalApp(dev, 'Coin Shop');
    await requestWallet(depsOf(t).db, depsOf(t).ctx, dev.id, app.client_id);
    const page = await owner.get(`/admin/clients/${app.client_id}`);
    expect(text(page.body)).toContain('Its owners asked for the wallet right on');
    expect(page.body).toContain(`action="/admin/clients/${app.client_id}/grant-wallet"`);
    await owner.reauthenticate();
    const res = await owner.post(`/admin/clients/${app.client_id}/grant-wallet`);
    expect(res.statusCode, res.body).toBe(303);
    const client = await findClientByClientId(t.database.db, app.client_id);
    expect(client).toMatchObject({ wallet: true, walletRequestedAt: null });
    const after = await owner.get(res.headers.location as string);
    expect(text(after.body)).toContain('The application has the wallet right now.');
    expect(after.body).not.toContain('/grant-wallet"');
    expect((await auditOf(app.client_id)).at(-1)).toMatchObject({
      actor: `operator:${ownerId}`,
      action: 'client_wallet_granted',
    });
  });

  it('refuses both to a role without the clients right, and shows it no button', async () => {
    const dev = await makeUser(t);
    const app = await portalApp(dev, 'Support Sees');
    await requestWallet(depsOf(t).db, depsOf(t).ctx, dev.id, app.client_id);
    const page = await support.get(`/admin/clients/${app.client_id}`);
    expect(page.statusCode).toBe(200);
    expect(text(page.body)).toContain('Awaiting approval');
    expect(page.body).not.toContain('/approve"');
    expect(page.body).not.toContain('/grant-wallet"');
    for (const action of ['approve', 'grant-wallet']) {
      const res = await support.post(`/admin/clients/${app.client_id}/${action}`);
      expect(res.statusCode).toBe(403);
    }
    const client = await findClientByClientId(t.database.db, app.client_id);
    expect(client).toMatchObject({ approvedAt: null, wallet: false });
  });

  it('answers 404 for an unknown or deleted application, and says a deleted one was deleted', async () => {
    const dev = await makeUser(t);
    const app = await portalApp(dev, 'Gone Site');
    await deleteOwnedApp(depsOf(t).db, depsOf(t).ctx, dev.id, app.client_id);
    const page = await owner.get(`/admin/clients/${app.client_id}`);
    expect(text(page.body)).toMatch(/Deleted by its owners on/);
    expect(page.body).not.toContain('/approve"');
    await owner.reauthenticate();
    expect((await owner.post(`/admin/clients/${app.client_id}/approve`)).statusCode).toBe(404);
    expect((await owner.post('/admin/clients/pk_unknown/grant-wallet')).statusCode).toBe(404);
  });
});
