import { hashPassword } from '../lib/password.js';
import {
  clearSignInAttempts,
  findUserByUsername,
  updateUser,
} from '../modules/accounts/accounts.repository.js';
import { createUser } from '../modules/accounts/accounts.service.js';
import { recordAudit } from '../modules/audit/audit.repository.js';
import { listClients, lockDemoSetup, updateClientColumns } from '../modules/clients/clients.repository.js';
import { MAX_REDIRECT_URIS } from '../modules/clients/clients.schemas.js';
import { createClient, rotateClientSecret } from '../modules/clients/clients.service.js';
import { credit } from '../modules/wallet/wallet.service.js';
import type { CommandContext } from './command.js';
import { DEMO, DEMO_CALLBACK, type DemoResult, demoSite } from './demo-account.js';

/**
 * What `idp demo` does, for the example site on `sitePort`; imported only when it runs (see
 * demo.commands.ts).
 */
export async function runDemo(ctx: CommandContext, sitePort: number = DEMO.sitePort): Promise<DemoResult> {
  const site = demoSite(sitePort);
  const passwordHash = await hashPassword(DEMO.password);
  return ctx.db.transaction().execute(async (trx) => {
    // Two `idp demo` runs at once take turns, so neither makes a second client.
    await lockDemoSetup(trx);
    const now = ctx.clock.now();
    const audit = (
      action: 'client_created' | 'client_secret_rotated' | 'wallet_credited',
      subject: string,
      details: Record<string, unknown> = {},
    ) =>
      recordAudit(trx, { at: now, actor: 'operator', action, subject, details: { ...details, demo: true } });

    // The client: created once; afterwards a fresh secret, and the wallet right, site, redirect
    // URIs and enabled state it needs, in case someone changed them or the site moved to another
    // port (its callbacks on the former port give way; those someone added stay). Found by a
    // callback on any port, so that a site that moved does not get a second demo client.
    let client: DemoResult['client'];
    const existing = (await listClients(trx)).find(
      (candidate) =>
        candidate.name === DEMO.clientName && candidate.redirectUris.some((uri) => DEMO_CALLBACK.test(uri)),
    );
    if (existing) {
      const kept = existing.redirectUris.filter((uri) => !DEMO_CALLBACK.test(uri));
      const uris = [...site.redirectUris, ...kept].slice(0, MAX_REDIRECT_URIS);
      const row = await updateClientColumns(trx, existing.id, {
        wallet: true,
        disabledAt: null,
        siteUrl: site.siteUrl,
        redirectUris: uris,
        updatedAt: now,
      });
      // The secrets it had stop working at once: the example site is given the new one.
      const rotated = await rotateClientSecret(trx, ctx, row.clientId);
      await audit('client_secret_rotated', `client:${row.clientId}`);
      client = {
        client_id: row.clientId,
        client_secret: rotated.client_secret,
        name: row.name,
        site_url: row.siteUrl,
        redirect_uris: row.redirectUris,
        wallet: row.wallet,
        created: false,
      };
    } else {
      const created = await createClient(trx, ctx, {
        name: DEMO.clientName,
        siteUrl: site.siteUrl,
        redirectUris: site.redirectUris,
        wallet: true,
        officialMobile: false,
      });
      await audit('client_created', `client:${created.client_id}`);
      client = {
        client_id: created.client_id,
        client_secret: created.client_secret,
        name: created.name,
        site_url: created.site_url,
        redirect_uris: created.redirect_uris,
        wallet: created.wallet,
        created: true,
      };
    }

    // The user: created once with a verified e-mail and some coins; afterwards the documented
    // password again, enabled, and not locked by earlier failed sign-ins.
    let user: DemoResult['user'];
    const existingUser = await findUserByUsername(trx, DEMO.username);
    if (existingUser) {
      const row = await updateUser(trx, existingUser.id, {
        passwordHash,
        disabledAt: null,
        updatedAt: now,
      });
      await clearSignInAttempts(trx, row.id);
      user = { ...userOf({ ...row, display_name: row.displayName }), created: false };
    } else {
      const created = await createUser(trx, ctx, {
        username: DEMO.username,
        password: DEMO.password,
        email: DEMO.email,
        emailVerified: true,
        displayName: DEMO.displayName,
      });
      const { transaction } = await credit(
        trx,
        { config: ctx.config, clock: ctx.clock },
        {
          username: DEMO.username,
          amount: DEMO.coins,
          description: 'Demo coins',
        },
      );
      // The event `idp wallet credit` records, marked as the demo's.
      await audit('wallet_credited', `username:${created.username.toLowerCase()}`, {
        transaction: transaction.id,
        amount: transaction.amount,
      });
      user = { ...userOf({ ...created, email: DEMO.email, display_name: DEMO.displayName }), created: true };
    }

    return {
      issuer: ctx.config.PUBLIC_URL,
      discovery_url: `${ctx.config.PUBLIC_URL}/.well-known/openid-configuration`,
      client,
      user,
    };
  });
}

/** The demo user as `idp demo` prints it, with the documented password. */
function userOf(row: { id: number; username: string; email: string | null; display_name: string | null }) {
  return {
    id: row.id,
    username: row.username,
    password: DEMO.password,
    email: row.email,
    display_name: row.display_name,
  };
}
