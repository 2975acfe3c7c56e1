/**
 * Wallet users in the thousands, and a ledger of a million entries, written with set-based SQL:
 * the accounts layer hashes each password with argon2id (tens of ms a user), which the 200 users of
 * bench/seed.ts can afford and thousands cannot. The rows are those the service writes: a user, a
 * grant of the wallet scope to the shop client, an access token under it (only its hash stored),
 * and a wallet whose balance is the sum of its credit entries, as `idp wallet credit` leaves it.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { generateSecret, hashSecret } from '../src/lib/secrets.js';
import { normalizeScopes } from '../src/modules/oauth/scopes.js';
import type { SeededClient } from './seed.js';

/** The first credit of each wallet (minor units): far more coins than a run can spend. */
const OPENING_BALANCE = 100_000_000_000;

export interface WalletUsers {
  userIds: number[];
  /** One access token with the wallet scope per user, of the shop client. */
  tokens: string[];
}

/** `count` users named `<prefix><n>`, each with a funded wallet and a wallet token of `shop`. */
export async function seedWalletUsers(
  db: Kysely<Database>,
  shop: SeededClient,
  count: number,
  prefix = 'wallet_user_',
): Promise<WalletUsers> {
  const scopes = normalizeScopes(['openid', 'wallet']);
  const users = await sql<{ id: number }>`
    insert into users (username, password_hash, display_name, verification_level, created_at, updated_at)
    select ${prefix} || n, 'placeholder', 'Wallet ' || n, 0, now(), now()
    from generate_series(1, ${count}::int) as n
    returning id`.execute(db);
  const userIds = users.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  const grants = await sql<{ id: number; user_id: number }>`
    insert into grants (user_id, client_pk, scopes, code_hash, auth_time, created_at)
    select id, ${shop.pk}::bigint, ${scopes}::text[], null, now(), now()
    from unnest(${userIds}::bigint[]) as id
    returning id, user_id`.execute(db);
  const tokens: string[] = [];
  const now = new Date();
  // A day: longer than any run, whatever ACCESS_TOKEN_TTL_SECONDS says.
  const expiresAt = new Date(now.getTime() + 24 * 3600_000);
  for (let offset = 0; offset < grants.rows.length; offset += 1000) {
    const batch = grants.rows.slice(offset, offset + 1000).map((grant) => {
      const token = generateSecret('accessToken');
      tokens.push(token);
      return {
        token_hash: hashSecret(token),
        grant_id: Number(grant.id),
        user_id: Number(grant.user_id),
        client_pk: shop.pk,
        scopes,
        created_at: now,
        expires_at: expiresAt,
      };
    });
    await db.insertInto('access_tokens').values(batch).execute();
  }
  await db.transaction().execute(async (trx) => {
    await sql`
      insert into wallets (user_id, balance, updated_at)
      select id, ${OPENING_BALANCE}::bigint, now() from unnest(${userIds}::bigint[]) as id`.execute(trx);
    await sql`
      insert into wallet_transactions (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
      select 'tx_bench_open_' || id, id, null, 'credit', ${OPENING_BALANCE}::bigint, ${OPENING_BALANCE}::bigint, 'Top-up', null, now()
      from unnest(${userIds}::bigint[]) as id`.execute(trx);
  });
  return { userIds, tokens };
}

/**
 * Appends about `entries` credits of 0.01 coin spread evenly over the users' wallets, in one
 * transaction, with each wallet's balance raised by what it received: every entry's balance_after
 * follows the one before it, so the ledger check (`idp wallet verify`) still holds. Returns how
 * many entries were written.
 */
export async function prefillLedger(
  db: Kysely<Database>,
  userIds: number[],
  entries: number,
): Promise<number> {
  if (entries <= 0 || userIds.length === 0) return 0;
  const perUser = Math.ceil(entries / userIds.length);
  await db.transaction().execute(async (trx) => {
    // Ordered by k: the ids (an identity) grow with each wallet's balance_after.
    await sql`
      insert into wallet_transactions (public_id, user_id, client_pk, type, amount, balance_after, description, idempotency_key, created_at)
      select 'tx_bench_fill_' || w.user_id || '_' || k, w.user_id, null, 'credit', 1, w.balance + k,
        'Top-up', null, now()
      from wallets w cross join generate_series(1, ${perUser}::int) as k
      where w.user_id = any(${userIds}::bigint[])
      order by k, w.user_id`.execute(trx);
    await sql`
      update wallets set balance = balance + ${perUser}::int, updated_at = now()
      where user_id = any(${userIds}::bigint[])`.execute(trx);
  });
  return perUser * userIds.length;
}

/** How many entries the ledger holds. */
export async function ledgerEntries(db: Kysely<Database>): Promise<number> {
  const result = await sql<{
    count: string;
  }>`select count(*)::text as count from wallet_transactions`.execute(db);
  return Number(result.rows[0]?.count ?? 0);
}
