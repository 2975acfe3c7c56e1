import type { Config } from '../config.js';
import { hashPassword } from '../lib/password.js';
import { generateSecret, hashSecret } from '../lib/secrets.js';
import {
  clearSignInAttempts,
  findUserByUsername,
  updateUser,
} from '../modules/accounts/accounts.repository.js';
import { createUser } from '../modules/accounts/accounts.service.js';
import { recordAudit } from '../modules/audit/audit.repository.js';
import {
  findClientByNameAndRedirectUri,
  lockDemoSetup,
  updateClientColumns,
} from '../modules/clients/clients.repository.js';
import { MAX_REDIRECT_URIS } from '../modules/clients/clients.schemas.js';
import { createClient } from '../modules/clients/clients.service.js';
import { credit } from '../modules/wallet/wallet.service.js';
import type { Command, CommandContext } from './command.js';

/**
 * `idp demo`: a demo site and user for examples/site. A second run finds the same client (by name
 * and first redirect URI) and user; secrets are stored only as hashes, so each run issues a fresh
 * client_secret and sets the password again. Refused in production: the password is published here.
 */
export const DEMO = {
  clientName: 'Demo site',
  siteUrl: 'http://localhost:4000',
  /** The example site's default port, 4000; any other loopback port matches too (RFC 8252 §7.3). */
  redirectUris: ['http://localhost:4000/callback', 'http://127.0.0.1:4000/callback'],
  username: 'demo',
  password: 'demo-password',
  email: 'demo@example.com',
  displayName: 'Demo User',
  /** Coins credited once, when the demo user is created. */
  coins: 100,
} as const;

export interface DemoResult {
  issuer: string;
  discovery_url: string;
  client: {
    client_id: string;
    client_secret: string;
    name: string;
    site_url: string;
    redirect_uris: string[];
    wallet: boolean;
    created: boolean;
  };
  user: {
    id: number;
    username: string;
    password: string;
    email: string | null;
    display_name: string | null;
    created: boolean;
  };
}

export async function runDemo(ctx: CommandContext): Promise<DemoResult> {
  const clientSecret = generateSecret('clientSecret');
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

    // The client: created once; afterwards a fresh secret, and the wallet right, redirect URIs
    // and enabled state it needs, in case someone changed them.
    let client: DemoResult['client'];
    const existing = await findClientByNameAndRedirectUri(trx, DEMO.clientName, DEMO.redirectUris[0]);
    if (existing) {
      const uris = [...new Set([...existing.redirectUris, ...DEMO.redirectUris])].slice(0, MAX_REDIRECT_URIS);
      const row = await updateClientColumns(trx, existing.id, {
        secretHash: hashSecret(clientSecret),
        wallet: true,
        disabledAt: null,
        redirectUris: uris,
        updatedAt: now,
      });
      await audit('client_secret_rotated', `client:${row.clientId}`);
      client = {
        client_id: row.clientId,
        client_secret: clientSecret,
        name: row.name,
        site_url: row.siteUrl,
        redirect_uris: row.redirectUris,
        wallet: row.wallet,
        created: false,
      };
    } else {
      const created = await createClient(trx, ctx, {
        name: DEMO.clientName,
        siteUrl: DEMO.siteUrl,
        redirectUris: [...DEMO.redirectUris],
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

function demoText(result: object): string {
  const { issuer, discovery_url, client, user } = result as DemoResult;
  return [
    `Demo site and user ready (${client.created ? 'created' : 'found'}; development only).`,
    '',
    `  issuer         ${issuer}`,
    `  discovery      ${discovery_url}`,
    `  client_id      ${client.client_id}`,
    `  client_secret  ${client.client_secret}`,
    `  redirect URIs  ${client.redirect_uris.join(', ')}`,
    `  wallet right   ${client.wallet ? 'yes' : 'no'}`,
    `  user           ${user.username} / ${user.password}${user.email ? ` (${user.email})` : ''}`,
    '',
    'The client_secret is new on every run; the previous one no longer works.',
    'Try it: `npm run example`, then open http://localhost:4000 and sign in as the demo user.',
  ].join('\n');
}

export const demoCommands: Command[] = [
  {
    name: 'demo',
    usage: 'idp demo [--json]',
    summary:
      `Create (or find again) a demo client "${DEMO.clientName}" with the wallet right and redirect URIs ` +
      `${DEMO.redirectUris.join(' and ')}, and a demo user ${DEMO.username} / ${DEMO.password} ` +
      `(${DEMO.email}, verified; ${DEMO.coins} coins when created). Each run prints a new client_secret ` +
      '(the previous one stops working) and resets the password. Refused when NODE_ENV=production',
    options: {},
    refuse: (config: Config) =>
      config.NODE_ENV === 'production'
        ? 'demo is refused when NODE_ENV=production: it creates a user whose password is published (use "idp users create" and "idp clients create")'
        : undefined,
    run: (ctx) => runDemo(ctx),
    text: demoText,
  },
];
