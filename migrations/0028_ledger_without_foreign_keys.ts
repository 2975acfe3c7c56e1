import { type Kysely, sql } from 'kysely';

/**
 * The ledger and its idempotency keys keep their user and client ids without foreign keys.
 *
 * Every row of both tables is written by `wallet_charge` (migrations/0006) or the credit statement
 * (src/modules/wallet/wallet.repository.ts), which first write the user's wallet row (itself a
 * foreign key to users) and take the client from an authenticated request; the ledger refuses updates and deletes, and users and clients
 * are never deleted (a deleted account is anonymized, a client disabled). So the constraints
 * could never fail, and they cost each charge five checks at commit time: a row lock on the
 * user, one on the client (a multixact on the row every site's charges share) and one on the new
 * ledger row, each a WAL record. The check of the key's transaction was deferred, and its plan,
 * cached by each connection while the ledger was small, scanned the whole ledger: half of
 * PostgreSQL's CPU time per charge, growing with the ledger (docs/performance.md "Charges").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table wallet_idempotency_keys
    drop constraint wallet_idempotency_keys_transaction_fkey,
    drop constraint wallet_idempotency_keys_client_pk_fkey,
    drop constraint wallet_idempotency_keys_user_id_fkey`.execute(db);
  await sql`alter table wallet_transactions
    drop constraint wallet_transactions_client_pk_fkey,
    drop constraint wallet_transactions_user_id_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table wallet_transactions
    add constraint wallet_transactions_client_pk_fkey foreign key (client_pk) references clients (id) on delete restrict,
    add constraint wallet_transactions_user_id_fkey foreign key (user_id) references users (id) on delete restrict`.execute(
    db,
  );
  await sql`alter table wallet_idempotency_keys
    add constraint wallet_idempotency_keys_transaction_fkey foreign key (transaction_public_id)
      references wallet_transactions (public_id) on delete restrict deferrable initially deferred,
    add constraint wallet_idempotency_keys_client_pk_fkey foreign key (client_pk) references clients (id) on delete cascade,
    add constraint wallet_idempotency_keys_user_id_fkey foreign key (user_id) references users (id) on delete cascade`.execute(
    db,
  );
}
