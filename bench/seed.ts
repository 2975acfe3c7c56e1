/**
 * What the scenarios need in the service's database, made through the service's own layer:
 * users, a client, access tokens as the token endpoint issues them, authorization codes and
 * refresh tokens (written in bulk: each works once), and a wallet client with a token per user.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../src/context.js';
import type { Database } from '../src/db/schema.js';
import { systemClock } from '../src/lib/clock.js';
import { generateSecret, hashSecret } from '../src/lib/secrets.js';
import { createUser } from '../src/modules/accounts/accounts.service.js';
import { findClientByClientId } from '../src/modules/clients/clients.repository.js';
import { createClient } from '../src/modules/clients/clients.service.js';
import { insertGrant } from '../src/modules/oauth/grants.repository.js';
import { normalizeScopes } from '../src/modules/oauth/scopes.js';
import { issueTokenSet } from '../src/modules/oauth/tokens.service.js';
import { credit } from '../src/modules/wallet/wallet.service.js';

export const USERS = 200;
export const PASSWORD = 'bench password 123';
export const REDIRECT_URI = 'https://bench.example/cb';
/** The one PKCE verifier of every seeded code: each exchange checks it, as oidc-provider's do. */
export const CODE_VERIFIER = 'bench-code-verifier-bench-code-verifier-0123456789';

export interface SeededClient {
  clientId: string;
  clientSecret: string;
  pk: number;
}

export interface Seeded {
  client: SeededClient;
  /** A client whose id_tokens are ES256 (`--id-token-alg ES256`), for the code exchange beside RS256's. */
  es256Client: SeededClient;
  /** The client with the wallet right, whose tokens charge. */
  shop: SeededClient;
  users: Array<{ id: number; username: string }>;
  /** Access tokens for openid profile email verified, several per user. */
  accessTokens: string[];
  /** Access tokens with the wallet scope, one per user, of a client with the wallet right. */
  walletTokens: string[];
  /** Access tokens bound to the DPoP key `dpopJkt` (RFC 9449 §6), one per user. */
  dpopTokens: string[];
}

export async function seedService(
  db: Kysely<Database>,
  ctx: Context,
  options: { tokensPerUser: number; dpopJkt: string; users?: number },
): Promise<Seeded> {
  const seedContext: Context = { config: ctx.config, clock: systemClock };
  const created = await createClient(db, seedContext, {
    name: 'Bench',
    siteUrl: 'https://bench.example',
    redirectUris: [REDIRECT_URI],
  });
  const clientRow = await findClientByClientId(db, created.client_id);
  if (!clientRow) throw new Error('the bench client is gone');
  const es256 = await createClient(db, seedContext, {
    name: 'Bench ES256',
    siteUrl: 'https://bench.example',
    redirectUris: [REDIRECT_URI],
    idTokenAlg: 'ES256',
  });
  const es256Row = await findClientByClientId(db, es256.client_id);
  if (!es256Row) throw new Error('the bench client is gone');
  const shop = await createClient(db, seedContext, {
    name: 'Bench shop',
    siteUrl: 'https://shop.bench.example',
    redirectUris: ['https://shop.bench.example/cb'],
    wallet: true,
  });
  const shopRow = await findClientByClientId(db, shop.client_id);
  if (!shopRow) throw new Error('the bench client is gone');

  /** An access token as the token endpoint issues it, for a grant of `scopes`. */
  const issueAccessToken = (userId: number, clientPk: number, scopes: string[]) =>
    db.transaction().execute(async (trx) => {
      const grant = await insertGrant(trx, {
        userId,
        clientPk,
        scopes,
        codeHash: null,
        authTime: systemClock.now(),
        at: systemClock.now(),
      });
      const issued = await issueTokenSet(trx, ctx, {
        grantId: grant.id,
        userId,
        clientPk,
        scopes,
        withRefreshToken: false,
      });
      return issued.accessToken;
    });

  const scopes = normalizeScopes(['openid', 'profile', 'email', 'verified']);
  const walletScopes = normalizeScopes(['openid', 'wallet']);
  const seeded: Seeded = {
    client: { clientId: created.client_id, clientSecret: created.client_secret, pk: clientRow.id },
    es256Client: { clientId: es256.client_id, clientSecret: es256.client_secret, pk: es256Row.id },
    shop: { clientId: shop.client_id, clientSecret: shop.client_secret, pk: shopRow.id },
    users: [],
    accessTokens: [],
    walletTokens: [],
    dpopTokens: [],
  };
  for (let i = 0; i < (options.users ?? USERS); i++) {
    const username = `bench_user_${i}`;
    const user = await createUser(db, ctx, {
      username,
      password: PASSWORD,
      email: `bench${i}@example.com`,
      displayName: `Bench ${i}`,
      verificationLevel: i % 3,
    });
    seeded.users.push({ id: user.id, username });
    for (let j = 0; j < options.tokensPerUser; j++) {
      seeded.accessTokens.push(await issueAccessToken(user.id, clientRow.id, scopes));
    }
    seeded.dpopTokens.push(await issueAccessToken(user.id, clientRow.id, scopes));
    // Far more coins than a run can spend: every charge should succeed.
    await credit(db, ctx, { username, amount: 1_000_000_000 });
    seeded.walletTokens.push(await issueAccessToken(user.id, shopRow.id, walletScopes));
  }
  // Bound as the token endpoint binds a token issued with a DPoP proof of that key.
  await db
    .updateTable('access_tokens')
    .set({ jkt: options.dpopJkt })
    .where('token_hash', 'in', seeded.dpopTokens.map(hashSecret))
    .execute();
  return seeded;
}

/** `count` authorization codes of the client, spread over the users, each with the PKCE challenge. */
export async function seedCodes(
  db: Kysely<Database>,
  seeded: Seeded,
  count: number,
  client: SeededClient = seeded.client,
): Promise<string[]> {
  const codes: string[] = [];
  const now = systemClock.now();
  const challenge = createHash('sha256').update(CODE_VERIFIER).digest('base64url');
  const scopes = normalizeScopes(['openid', 'profile', 'email', 'verified']);
  // A code is redeemed only under the consent it was issued with, given before it.
  const consentedAt = new Date(now.getTime() - 1000);
  await db
    .insertInto('consents')
    .values(
      seeded.users.map((user) => ({
        user_id: user.id,
        client_pk: client.pk,
        scopes,
        created_at: consentedAt,
        updated_at: consentedAt,
      })),
    )
    .onConflict((conflict) => conflict.columns(['user_id', 'client_pk']).doNothing())
    .execute();
  for (let offset = 0; offset < count; offset += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - offset) }, (_, i) => {
      const code = generateSecret('authorizationCode');
      codes.push(code);
      return {
        code_hash: hashSecret(code),
        client_pk: client.pk,
        user_id: seeded.users[(offset + i) % seeded.users.length]?.id as number,
        redirect_uri: REDIRECT_URI,
        scopes,
        code_challenge: challenge,
        nonce: `n-${offset + i}`,
        auth_time: now,
        created_at: now,
        expires_at: new Date(now.getTime() + 3600_000),
      };
    });
    await db.insertInto('authorization_codes').values(batch).execute();
  }
  return codes;
}

/** `count` refresh tokens of the client, on one grant per user (each works once: it rotates). */
export async function seedRefreshTokens(
  db: Kysely<Database>,
  seeded: Seeded,
  count: number,
): Promise<string[]> {
  const now = systemClock.now();
  const scopes = normalizeScopes(['openid', 'profile', 'email', 'verified', 'offline_access']);
  const grants: number[] = [];
  for (const user of seeded.users) {
    const grant = await insertGrant(db, {
      userId: user.id,
      clientPk: seeded.client.pk,
      scopes,
      codeHash: null,
      authTime: now,
      at: now,
    });
    grants.push(grant.id);
  }
  const tokens: string[] = [];
  for (let offset = 0; offset < count; offset += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - offset) }, (_, i) => {
      const token = generateSecret('refreshToken');
      tokens.push(token);
      return {
        token_hash: hashSecret(token),
        grant_id: grants[(offset + i) % grants.length] as number,
        created_at: now,
        expires_at: new Date(now.getTime() + 24 * 3600_000),
      };
    });
    await db.insertInto('refresh_tokens').values(batch).execute();
  }
  return tokens;
}
