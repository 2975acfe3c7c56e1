import { describe, expect, it } from 'vitest';
import { updateClient } from '../../../src/modules/clients/clients.service.js';
import { revokeAppAccess } from '../../../src/modules/oauth/consents.service.js';
import { credit } from '../../../src/modules/wallet/wallet.service.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeClient } from '../../helpers/factories.js';
import {
  balanceOf,
  call,
  charge,
  chargeRaw,
  holder,
  ledgerCount,
  order,
  plain,
  ROUTES,
  setUpWalletApp,
  shop,
  t,
  tokenFor,
} from './wallet.fixture.js';

/*
 * The wallet's access rules and balance: a wallet-scoped token of a
 * client that holds the wallet right.
 */

setUpWalletApp();

describe('access', () => {
  it('needs a bearer token: 401 without one, 401 invalid_token for an unknown one', async () => {
    for (const route of ROUTES) {
      const res = await call(route);
      expectApiError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm=/);
      expectApiError(await call(route, 'at_unknown'), 401, 'invalid_token');
    }
  });

  it('answers 401 before looking at a bad body', async () => {
    expectApiError(await chargeRaw('', '{"amount":"x"}'), 401, 'unauthorized');
  });

  it('refuses a token without the wallet scope: 403 access_denied', async () => {
    const user = await holder(10);
    const token = await tokenFor(user.id, shop, ['openid', 'profile']);
    for (const route of ROUTES) expectApiError(await call(route, token), 403, 'access_denied');
    expect(await ledgerCount(user.id)).toBe(1);
  });

  it('refuses a client without the wallet right, even with a wallet-scoped token', async () => {
    const user = await holder(10, plain);
    for (const route of ROUTES) expectApiError(await call(route, user.token), 403, 'access_denied');
  });

  it('stops a client at once when the operator withdraws its wallet right', async () => {
    const outlet = await makeClient(t, { wallet: true });
    const user = await holder(10, outlet);
    expect(await balanceOf(user.token)).toBe(10);
    // The operator's CLI is another process: the change counts once the database announced it.
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, outlet.clientId, {
      wallet: false,
    });
    await t.sync();
    for (const route of ROUTES) expectApiError(await call(route, user.token), 403, 'access_denied');
    await updateClient(t.database.db, { config: t.config, clock: t.clock }, outlet.clientId, {
      wallet: true,
    });
    await t.sync();
    expect((await charge(user.token, order(1))).statusCode).toBe(201);
  });

  it('stops at once when the user revokes the app', async () => {
    const user = await holder(10);
    expect((await charge(user.token, order(1))).statusCode).toBe(201);
    await revokeAppAccess(t.database.db, { userId: user.id, clientId: shop.clientId, at: t.clock.now() });
    await t.sync();
    for (const route of ROUTES) expectApiError(await call(route, user.token), 401, 'invalid_token');
    expect(await ledgerCount(user.id)).toBe(2);
  });

  it('marks every wallet route bearer in the catalogue', async () => {
    const catalogue = (await t.app.inject({ method: 'GET', url: '/api/v1/' })).json() as {
      routes: Array<{ method: string; path: string; auth: string }>;
    };
    for (const route of ROUTES) {
      expect(catalogue.routes).toContainEqual(
        expect.objectContaining({ method: route.method, path: route.url, auth: 'bearer' }),
      );
    }
  });
});

describe('GET /api/v1/wallet/balance', () => {
  it('is 0 before the first top-up and the balance in coins after', async () => {
    const user = await holder(0);
    const empty = await t.app.inject({
      method: 'GET',
      url: '/api/v1/wallet/balance',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(empty.json()).toEqual({ ok: true, balance: 0, currency: 'COIN' });
    expect(empty.headers['cache-control']).toBe('no-store');
    await credit(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: user.username, amount: 12.5 },
    );
    expect(await balanceOf(user.token)).toBe(12.5);
  });

  it('is the wallet_balance of the premium status', async () => {
    const user = await holder(7.25);
    const premium = await t.app.inject({
      method: 'GET',
      url: '/api/v1/premium/status',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(premium.json()).toMatchObject({ wallet_balance: 7.25 });
  });
});
