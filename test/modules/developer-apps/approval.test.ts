import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveClient } from '../../../src/modules/developer-apps/app-review.service.js';
import { appMaySignIn } from '../../../src/modules/developer-apps/approval.js';
import {
  addCoOwner,
  createOwnedApp,
  deleteOwnedApp,
  removeCoOwner,
} from '../../../src/modules/developer-apps/apps.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl } from '../../helpers/http.js';

/*
 * CLIENT_REGISTRATION at the authorization endpoint, once the user is known: under `approval` an
 * application no operator approved signs in only its owners and co-owners (others get a page that
 * says it awaits review); under `open` it signs anyone in, its consent page marked "not reviewed"
 * until approved. A deleted application is unknown there.
 */

describe('appMaySignIn', () => {
  const unreviewed = { approvedAt: null };
  const approved = { approvedAt: new Date() };
  it.each([
    ['approval', unreviewed, false, false],
    ['approval', unreviewed, true, true],
    ['approval', approved, false, true],
    ['open', unreviewed, false, true],
    ['closed', unreviewed, false, false],
    ['closed', unreviewed, true, true],
    ['closed', approved, false, true],
  ] as const)('%s, approved %o, owner %s: %s', (mode, client, isOwner, expected) => {
    expect(appMaySignIn(mode, client, isOwner)).toBe(expected);
  });
});

const operatorAudit = (t: TestApp) => (change: { action: never; subject: string }) => ({
  at: t.clock.now(),
  actor: 'operator:1',
  action: change.action,
  subject: change.subject,
});

async function ownedApp(t: TestApp, owner: TestUser): Promise<TestClient> {
  const { db, ctx } = depsOf(t);
  const app = await createOwnedApp(db, ctx, {
    ownerUserId: owner.id,
    input: {
      name: 'Fresh Site',
      siteUrl: 'https://fresh.example',
      redirectUris: ['https://fresh.example/cb'],
    },
    via: 'portal',
  });
  return {
    clientId: app.client_id,
    clientSecret: app.client_secret ?? '',
    redirectUri: 'https://fresh.example/cb',
  };
}

/** Signs `user` in through the authorization request of `client` and returns the page (or redirect) that follows. */
async function signInThrough(
  t: TestApp,
  client: TestClient,
  user: TestUser,
): Promise<LightMyRequestResponse> {
  const browser = new Browser(t.app);
  const start = await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'consent' }));
  if (start.statusCode !== 302) return start;
  const signedIn = await browser.signIn(user, start.headers.location as string);
  return browser.get(signedIn.headers.location as string);
}

describe('under approval (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('signs in its owner, with the consent page marked not reviewed', async () => {
    const owner = await makeUser(t);
    const client = await ownedApp(t, owner);
    const page = await signInThrough(t, client, owner);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="decision"');
    expect(page.body).toContain('Not reviewed');
  });

  it('refuses anyone else with a page saying it awaits review (en, ru), until an operator approves it', async () => {
    const owner = await makeUser(t);
    const stranger = await makeUser(t);
    const client = await ownedApp(t, owner);
    const refused = await signInThrough(t, client, stranger);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('This application awaits review');
    expect(refused.body).not.toContain('name="decision"');

    const browser = new Browser(t.app);
    browser.cookies.set('lang', 'ru');
    const start = await browser.get(authorizeUrl(client, { scope: 'openid' }));
    const signedIn = await browser.signIn(stranger, start.headers.location as string);
    const ru = await browser.get(signedIn.headers.location as string);
    expect(ru.statusCode).toBe(403);
    expect(ru.body).toContain('Приложение ждёт проверки');

    const { db, ctx } = depsOf(t);
    await approveClient(db, ctx, client.clientId, { audit: operatorAudit(t) as never });
    await t.sync();
    const allowed = await signInThrough(t, client, stranger);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('name="decision"');
    expect(allowed.body).not.toContain('Not reviewed');
  });

  it('refuses the consent form of a co-owner who left the application since the page was shown', async () => {
    const owner = await makeUser(t);
    const coOwner = await makeUser(t);
    const client = await ownedApp(t, owner);
    const { db, ctx } = depsOf(t);
    await addCoOwner(db, ctx, owner.id, client.clientId, coOwner.username);
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(client, { scope: 'openid', prompt: 'consent' }));
    const signedIn = await browser.signIn(coOwner, start.headers.location as string);
    const page = await browser.get(signedIn.headers.location as string);
    expect(page.body).toContain('name="decision"');
    await removeCoOwner(db, ctx, coOwner.id, client.clientId, coOwner.id);
    const hidden = hiddenFields(page.body, '/api/v1/oauth/authorize/decision');
    const decided = await browser.post('/api/v1/oauth/authorize/decision', { ...hidden, decision: 'allow' });
    expect(decided.statusCode).toBe(403);
    expect(decided.body).toContain('This application awaits review');
  });

  it('knows a deleted application no more', async () => {
    const owner = await makeUser(t);
    const client = await ownedApp(t, owner);
    const { db, ctx } = depsOf(t);
    await deleteOwnedApp(db, ctx, owner.id, client.clientId);
    await t.sync();
    const page = await new Browser(t.app).get(authorizeUrl(client, { scope: 'openid' }));
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('not a registered application');
  });
});

describe('under open', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
  });
  afterAll(() => t.close());

  it('signs anyone in, the consent page marked not reviewed (en, ru) until approved', async () => {
    const owner = await makeUser(t);
    const stranger = await makeUser(t);
    const client = await ownedApp(t, owner);
    const page = await signInThrough(t, client, stranger);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="decision"');
    expect(page.body).toContain('Not reviewed: this application was registered by its owners');

    const { db, ctx } = depsOf(t);
    await approveClient(db, ctx, client.clientId, { audit: operatorAudit(t) as never });
    await t.sync();
    const approved = await signInThrough(t, client, stranger);
    expect(approved.statusCode).toBe(200);
    expect(approved.body).not.toContain('Not reviewed');
  });
});
