import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { ClientInputError } from '../../../src/modules/clients/client-input.js';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import {
  createOwnedApp,
  deleteOwnedApp,
  findOwnedApp,
  listOwnedApps,
  updateOwnedApp,
} from '../../../src/modules/developer-apps/apps.service.js';
import { isOwnerOf } from '../../../src/modules/developer-apps/owners.repository.js';
import { insertMail } from '../../../src/modules/mail/outbox.repository.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { auditOf, mailTo, makeOwner, site } from './helpers.js';

/*
 * Applications that site owners register and run themselves (issue 36): what the portal and RFC
 * 7591 registration call, with the operator's CLIENT_REGISTRATION, the limits, ownership and the
 * audit log and mail of every change.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = (env: Record<string, string> = {}) => ({ config: testConfig(env), clock });

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());
beforeEach(() => clock.advance(2 * 3600 * 1000));

describe('createOwnedApp', () => {
  it('registers an unapproved application owned by its creator, audited as them and mailed to them', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: site(),
      via: 'portal',
    });
    expect(app).toMatchObject({ name: 'My Site', approved: false, registered_via: 'portal', wallet: false });
    expect(app.client_secret).toMatch(/^sk_/);
    expect(app.registration_access_token).toBeUndefined();
    const client = await findClientByClientId(database.db, app.client_id);
    expect(client?.approvedAt).toBeNull();
    expect(await isOwnerOf(database.db, client?.id ?? 0, owner.id)).toBe(true);
    const events = await auditOf(database.db, app.client_id);
    expect(events).toMatchObject([{ actor: `user:${owner.id}`, action: 'client_created' }]);
    expect(JSON.stringify(events)).not.toContain(app.client_secret);
    const mail = await mailTo(database.db, owner.email);
    expect(mail).toMatchObject([{ kind: 'app_changed', locale: 'en', user_id: owner.id }]);
    expect(mail[0]?.subject).toBe('Your application "My Site" changed');
    expect(mail[0]?.text_body).toContain(`${owner.username}: registered the application.`);
    expect(mail[0]?.text_body).toContain(app.client_id);
    expect(mail[0]?.text_body).not.toContain(app.client_secret);
  });

  it('writes to an owner in the language of their latest message, and not to an unconfirmed address', async () => {
    const russian = await makeOwner(database.db, ctx());
    await insertMail(
      database.db,
      {
        kind: 'email_verification',
        userId: russian.id,
        recipient: russian.email,
        locale: 'ru',
        subject: 's',
        text: 't',
        html: 'h',
      },
      clock.now(),
    );
    await createOwnedApp(database.db, ctx(), { ownerUserId: russian.id, input: site(), via: 'portal' });
    const [, notice] = await mailTo(database.db, russian.email);
    expect(notice).toMatchObject({
      kind: 'app_changed',
      locale: 'ru',
      subject: 'Ваше приложение «My Site» изменено',
    });
    expect(notice?.text_body).toContain(`${russian.username}: регистрирует приложение.`);

    const unconfirmed = await makeOwner(database.db, ctx(), { emailVerified: false });
    await createOwnedApp(database.db, ctx(), { ownerUserId: unconfirmed.id, input: site(), via: 'portal' });
    expect(await mailTo(database.db, unconfirmed.email)).toEqual([]);
  });

  it('gives an RFC 7591 registration its registration access token, stored as a hash', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: { ...site(), isPublic: true },
      via: 'registration',
    });
    expect(app.registration_access_token).toMatch(/^rat_/);
    expect(app.client_secret).toBeUndefined();
    expect(app.registered_via).toBe('registration');
    const row = await database.db
      .selectFrom('clients')
      .select('registration_access_token_hash')
      .where('client_id', '=', app.client_id)
      .executeTakeFirstOrThrow();
    expect(row.registration_access_token_hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("registers an ownerless application for an operator's token, audited as the registration", async () => {
    const app = await createOwnedApp(database.db, ctx(), {
      ownerUserId: null,
      input: site(),
      via: 'registration',
    });
    expect(app.approved).toBe(false);
    expect(await auditOf(database.db, app.client_id)).toMatchObject([
      { actor: 'registration', action: 'client_created' },
    ]);
  });

  it('keeps the clients of operators approved at creation', async () => {
    const made = await createClient(database.db, ctx(), site('Operator Site'));
    const client = await findClientByClientId(database.db, made.client_id);
    expect(client?.approvedAt).toEqual(clock.now());
    expect(client?.registeredVia).toBe('operator');
  });

  it('refuses every registration while CLIENT_REGISTRATION is closed, with 403 access_denied', async () => {
    const owner = await makeOwner(database.db, ctx());
    for (const ownerUserId of [owner.id, null]) {
      const error = await createOwnedApp(database.db, ctx({ CLIENT_REGISTRATION: 'closed' }), {
        ownerUserId,
        input: site(),
        via: 'portal',
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 403, error: 'access_denied' });
    }
    expect(await listOwnedApps(database.db, owner.id)).toEqual([]);
  });

  it('refuses the wallet right and the official mobile app by their fields, even asked as false', async () => {
    const owner = await makeOwner(database.db, ctx());
    const error = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: { ...site(), wallet: true, officialMobile: false },
      via: 'portal',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientInputError);
    expect(Object.keys((error as ClientInputError).fields).sort()).toEqual(['officialMobile', 'wallet']);
    expect(await listOwnedApps(database.db, owner.id)).toEqual([]);
  });

  it('validates as the CLI does, by field, and registers nothing', async () => {
    const owner = await makeOwner(database.db, ctx());
    const error = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: { name: '', siteUrl: 'ftp://x', redirectUris: [] },
      via: 'portal',
    }).catch((e: unknown) => e);
    expect((error as ClientInputError).fields).toMatchObject({
      name: expect.any(String),
      siteUrl: expect.any(String),
      redirectUris: expect.any(String),
    });
    expect(await listOwnedApps(database.db, owner.id)).toEqual([]);
    expect(await mailTo(database.db, owner.email)).toEqual([]);
  });

  it('stops at DEVELOPER_APPS_PER_USER applications owned, deleted ones not counted', async () => {
    const owner = await makeOwner(database.db, ctx());
    const limited = ctx({ DEVELOPER_APPS_PER_USER: '2' });
    const first = await createOwnedApp(database.db, limited, {
      ownerUserId: owner.id,
      input: site('A'),
      via: 'portal',
    });
    await createOwnedApp(database.db, limited, { ownerUserId: owner.id, input: site('B'), via: 'portal' });
    const error = await createOwnedApp(database.db, limited, {
      ownerUserId: owner.id,
      input: site('C'),
      via: 'portal',
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, error: 'access_denied' });
    await deleteOwnedApp(database.db, limited, owner.id, first.client_id);
    await createOwnedApp(database.db, limited, { ownerUserId: owner.id, input: site('C'), via: 'portal' });
    expect((await listOwnedApps(database.db, owner.id)).map((app) => app.client.name)).toEqual(['C', 'B']);
  });
});

describe('ownership', () => {
  it("never shows another account's application: not listed, not found, not changed, not deleted", async () => {
    const owner = await makeOwner(database.db, ctx());
    const stranger = await makeOwner(database.db, ctx());
    const app = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: site(),
      via: 'portal',
    });
    expect(await listOwnedApps(database.db, stranger.id)).toEqual([]);
    expect(await findOwnedApp(database.db, stranger.id, app.client_id)).toBeUndefined();
    expect(
      await updateOwnedApp(database.db, ctx(), stranger.id, app.client_id, { name: 'Mine' }).catch((e) => e),
    ).toMatchObject({
      status: 404,
    });
    expect(
      await deleteOwnedApp(database.db, ctx(), stranger.id, app.client_id).catch((e) => e),
    ).toMatchObject({
      status: 404,
    });
    expect((await findOwnedApp(database.db, owner.id, app.client_id))?.client.name).toBe('My Site');
    expect(await findOwnedApp(database.db, owner.id, 'pk_unknown')).toBeUndefined();
  });

  it('finds an application with its role and database id', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await createOwnedApp(database.db, ctx(), {
      ownerUserId: owner.id,
      input: site(),
      via: 'portal',
    });
    const found = await findOwnedApp(database.db, owner.id, app.client_id);
    const client = await findClientByClientId(database.db, app.client_id);
    expect(found).toMatchObject({ role: 'owner', clientPk: client?.id, client: { approved: false } });
  });
});
