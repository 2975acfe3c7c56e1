import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { grantWallet } from '../../../src/modules/developer-apps/app-review.service.js';
import {
  addCoOwner,
  assertChangeAllowed,
  createOwnedApp,
  deleteOwnedApp,
  findOwnedApp,
  listOwnedApps,
  listOwners,
  removeCoOwner,
  requestWallet,
  updateOwnedApp,
} from '../../../src/modules/developer-apps/apps.service.js';
import { MAX_APP_OWNERS } from '../../../src/modules/developer-apps/co-owners.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { insertAccessToken } from '../../helpers/tokens.js';
import { auditOf, mailTo, makeOwner, site } from './helpers.js';

/*
 * What owners and co-owners may do with an application after registering it, each change audited
 * as the account and mailed to every owner, and the changes per hour.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = (env: Record<string, string> = {}) => ({ config: testConfig(env), clock });

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());
beforeEach(() => clock.advance(2 * 3600 * 1000));

async function appOf(owner: { id: number }) {
  return createOwnedApp(database.db, ctx(), { ownerUserId: owner.id, input: site(), via: 'portal' });
}

describe('updateOwnedApp', () => {
  it('changes settings through the CLI validation, audited with before and after, mailed to every owner', async () => {
    const owner = await makeOwner(database.db, ctx());
    const coOwner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await addCoOwner(database.db, ctx(), owner.id, app.client_id, coOwner.username);
    const changed = await updateOwnedApp(database.db, ctx(), coOwner.id, app.client_id, {
      name: 'Renamed',
      addRedirectUris: ['https://mysite.example/cb2'],
    });
    expect(changed).toMatchObject({ name: 'Renamed', approved: false });
    expect(changed.redirect_uris).toEqual(['https://mysite.example/cb', 'https://mysite.example/cb2']);
    const updated = (await auditOf(database.db, app.client_id)).find((e) => e.action === 'client_updated');
    expect(updated).toMatchObject({
      actor: `user:${coOwner.id}`,
      details: { before: { name: 'My Site' }, after: { name: 'Renamed' } },
    });
    for (const who of [owner, coOwner]) {
      const last = (await mailTo(database.db, who.email)).at(-1);
      expect(last?.text_body).toContain(`${coOwner.username}: changed its settings: name, redirect_uris.`);
    }
  });

  it('lets owners disable and enable their application; disabling ends its tokens', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    const disabled = await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, { disabled: true });
    expect(disabled.disabled).toBe(true);
    expect((await mailTo(database.db, owner.email)).at(-1)?.text_body).toContain('disabled the application');
    expect(
      (await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, { disabled: false })).disabled,
    ).toBe(false);
    const actions = (await auditOf(database.db, app.client_id)).map((e) => e.action);
    expect(actions).toEqual(['client_created', 'client_disabled', 'client_enabled']);
  });

  it('refuses the rights only operators grant by their fields, and bad input by field', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    for (const input of [{ wallet: true }, { wallet: false }, { officialMobile: true }]) {
      const error = await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, input).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        status: 400,
        fields: { [Object.keys(input)[0] as string]: expect.any(String) },
      });
    }
    const bad = await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, {
      addRedirectUris: ['http://evil.example/cb'],
    }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, fields: { redirectUris: expect.any(String) } });
    expect((await auditOf(database.db, app.client_id)).map((e) => e.action)).toEqual(['client_created']);
  });

  it('mails no one when nothing changed', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, { name: 'My Site' });
    expect(await mailTo(database.db, owner.email)).toHaveLength(1);
  });
});

describe('deleteOwnedApp', () => {
  it('disables the application for good, revokes its grants (so its tokens stop), hides it, audited and mailed', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    const client = await database.db
      .selectFrom('clients')
      .select('id')
      .where('client_id', '=', app.client_id)
      .executeTakeFirstOrThrow();
    await insertAccessToken(database.db, {
      userId: owner.id,
      clientId: app.client_id,
      scopes: ['openid'],
      clock,
    });
    const liveGrants = () =>
      database.db
        .selectFrom('grants')
        .select('id')
        .where('client_pk', '=', client.id)
        .where('revoked_at', 'is', null)
        .execute();
    expect(await liveGrants()).toHaveLength(1);
    await deleteOwnedApp(database.db, ctx(), owner.id, app.client_id);
    const row = await database.db
      .selectFrom('clients')
      .select(['deleted_at', 'disabled_at'])
      .where('id', '=', client.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).toEqual(clock.now());
    expect(row.disabled_at).toEqual(clock.now());
    expect(await liveGrants()).toEqual([]);
    expect(await listOwnedApps(database.db, owner.id)).toEqual([]);
    expect(await findOwnedApp(database.db, owner.id, app.client_id)).toBeUndefined();
    expect((await auditOf(database.db, app.client_id)).at(-1)).toMatchObject({
      actor: `user:${owner.id}`,
      action: 'client_deleted',
    });
    expect((await mailTo(database.db, owner.email)).at(-1)?.text_body).toContain('deleted the application');
    const again = await updateOwnedApp(database.db, ctx(), owner.id, app.client_id, { name: 'Back' }).catch(
      (e) => e,
    );
    expect(again).toMatchObject({ status: 404 });
  });

  it("is the owner's alone: a co-owner is refused", async () => {
    const owner = await makeOwner(database.db, ctx());
    const coOwner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await addCoOwner(database.db, ctx(), owner.id, app.client_id, coOwner.username);
    const error = await deleteOwnedApp(database.db, ctx(), coOwner.id, app.client_id).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 403, error: 'access_denied' });
    expect(await findOwnedApp(database.db, owner.id, app.client_id)).toBeDefined();
  });
});

describe('co-owners', () => {
  it('are added by username and see the application as their own', async () => {
    const owner = await makeOwner(database.db, ctx());
    const coOwner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    const added = await addCoOwner(
      database.db,
      ctx(),
      owner.id,
      app.client_id,
      ` ${coOwner.username.toUpperCase()} `,
    );
    expect(added).toMatchObject({ userId: coOwner.id, role: 'co_owner' });
    const found = await findOwnedApp(database.db, coOwner.id, app.client_id);
    expect(found?.role).toBe('co_owner');
    expect((await listOwners(database.db, found?.clientPk ?? 0)).map((o) => [o.username, o.role])).toEqual([
      [owner.username, 'owner'],
      [coOwner.username, 'co_owner'],
    ]);
    expect((await auditOf(database.db, app.client_id)).at(-1)).toMatchObject({
      actor: `user:${owner.id}`,
      action: 'client_owner_added',
      details: { username: coOwner.username },
    });
    expect((await mailTo(database.db, coOwner.email)).at(-1)?.text_body).toContain(
      `added ${coOwner.username} as a co-owner`,
    );
  });

  it('refuses an unknown or disabled account, an owner already, and more than the limit, by the username field', async () => {
    const owner = await makeOwner(database.db, ctx());
    const disabled = await makeOwner(database.db, ctx());
    await disableUser(database.db, ctx(), { username: disabled.username });
    const app = await appOf(owner);
    for (const username of ['no_such_user', disabled.username, owner.username, '']) {
      const error = await addCoOwner(database.db, ctx(), owner.id, app.client_id, username).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ status: 400, fields: { username: expect.any(String) } });
    }
    for (let i = 1; i < MAX_APP_OWNERS; i += 1) {
      const more = await makeOwner(database.db, ctx());
      await addCoOwner(database.db, ctx(), owner.id, app.client_id, more.username);
    }
    const extra = await makeOwner(database.db, ctx());
    const error = await addCoOwner(database.db, ctx(), owner.id, app.client_id, extra.username).catch(
      (e) => e,
    );
    expect(error).toMatchObject({
      fields: { username: `an application may have at most ${MAX_APP_OWNERS} owners` },
    });
  });

  it('are removed by the owner; a co-owner removes only themself; the owner never', async () => {
    const owner = await makeOwner(database.db, ctx());
    const first = await makeOwner(database.db, ctx());
    const second = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await addCoOwner(database.db, ctx(), owner.id, app.client_id, first.username);
    await addCoOwner(database.db, ctx(), first.id, app.client_id, second.username);
    const refused = await removeCoOwner(database.db, ctx(), first.id, app.client_id, second.id).catch(
      (e) => e,
    );
    expect(refused).toMatchObject({ status: 403 });
    const notOwner = await removeCoOwner(database.db, ctx(), first.id, app.client_id, owner.id).catch(
      (e) => e,
    );
    expect(notOwner).toMatchObject({ status: 403 });
    const self = await removeCoOwner(database.db, ctx(), owner.id, app.client_id, owner.id).catch((e) => e);
    expect(self).toMatchObject({ status: 403 });
    await removeCoOwner(database.db, ctx(), first.id, app.client_id, first.id);
    expect(await findOwnedApp(database.db, first.id, app.client_id)).toBeUndefined();
    expect((await mailTo(database.db, first.email)).at(-1)?.text_body).toContain(`removed ${first.username}`);
    await removeCoOwner(database.db, ctx(), owner.id, app.client_id, second.id);
    expect(await findOwnedApp(database.db, second.id, app.client_id)).toBeUndefined();
    const stranger = await removeCoOwner(database.db, ctx(), owner.id, app.client_id, second.id).catch(
      (e) => e,
    );
    expect(stranger).toMatchObject({ status: 400, fields: { username: expect.any(String) } });
    expect(
      (await auditOf(database.db, app.client_id)).filter((e) => e.action === 'client_owner_removed'),
    ).toHaveLength(2);
  });
});

describe('the wallet right', () => {
  it('is requested by owners and granted by an operator, who clears the request', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await requestWallet(database.db, ctx(), owner.id, app.client_id);
    await requestWallet(database.db, ctx(), owner.id, app.client_id);
    expect((await findOwnedApp(database.db, owner.id, app.client_id))?.client).toMatchObject({
      wallet: false,
      wallet_requested: true,
    });
    expect(
      (await auditOf(database.db, app.client_id)).filter((e) => e.action === 'client_wallet_requested'),
    ).toHaveLength(1);
    await grantWallet(database.db, ctx(), app.client_id, {
      audit: (change) => ({
        at: clock.now(),
        actor: 'operator:1',
        action: change.action,
        subject: change.subject,
      }),
    });
    expect((await findOwnedApp(database.db, owner.id, app.client_id))?.client).toMatchObject({
      wallet: true,
      wallet_requested: false,
    });
    expect((await mailTo(database.db, owner.email)).at(-1)?.text_body).toContain(
      'The operators of the service: granted the application the wallet right.',
    );
    const again = await requestWallet(database.db, ctx(), owner.id, app.client_id).catch((e: unknown) => e);
    expect(again).toMatchObject({ status: 400, fields: { wallet: expect.any(String) } });
  });

  it('is answered by the CLI too: idp clients update --wallet true clears the request', async () => {
    const owner = await makeOwner(database.db, ctx());
    const app = await appOf(owner);
    await requestWallet(database.db, ctx(), owner.id, app.client_id);
    await updateClient(database.db, ctx(), app.client_id, { wallet: true });
    expect((await findOwnedApp(database.db, owner.id, app.client_id))?.client).toMatchObject({
      wallet: true,
      wallet_requested: false,
    });
  });
});

describe('changes per hour', () => {
  it('stops an account at DEVELOPER_CHANGES_PER_HOUR changes, whatever the application, for an hour', async () => {
    const owner = await makeOwner(database.db, ctx());
    const limited = ctx({ DEVELOPER_CHANGES_PER_HOUR: '3' });
    const app = await createOwnedApp(database.db, limited, {
      ownerUserId: owner.id,
      input: site(),
      via: 'portal',
    });
    await updateOwnedApp(database.db, limited, owner.id, app.client_id, { name: 'Two' });
    clock.advance(60_000);
    await updateOwnedApp(database.db, limited, owner.id, app.client_id, { name: 'Three' });
    const error = await updateOwnedApp(database.db, limited, owner.id, app.client_id, { name: 'Four' }).catch(
      (e) => e,
    );
    expect(error).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(error.headers['retry-after']).toBe(String(3600 - 60));
    const other = await createOwnedApp(database.db, limited, {
      ownerUserId: owner.id,
      input: site('Other'),
      via: 'portal',
    }).catch((e) => e);
    expect(other).toMatchObject({ status: 429 });
    await expect(assertChangeAllowed(database.db, limited, owner.id)).rejects.toMatchObject({ status: 429 });
    clock.advance(3600_000 - 60_000 + 1);
    await updateOwnedApp(database.db, limited, owner.id, app.client_id, { name: 'Four' });
  });
});
