import { type Kysely, sql } from 'kysely';

/**
 * id_tokens signed with RS256, ES256 or EdDSA. `signing_keys.algorithm` has
 * existed since 0002 (every row so far is RS256); it is now held to the three algorithms, and the
 * newest key of each is found through an index. Each client says which one signs its id_tokens
 * (`id_token_signed_response_alg`, OIDC Registration §2); existing clients keep RS256.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table signing_keys add constraint signing_keys_algorithm_known
    check (algorithm in ('RS256', 'ES256', 'EdDSA'))`.execute(db);
  await sql`create index signing_keys_current_idx on signing_keys (algorithm, created_at desc, kid desc)
    where retired_at is null`.execute(db);
  await db.schema
    .alterTable('clients')
    .addColumn('id_token_signed_response_alg', 'text', (col) =>
      col
        .notNull()
        .defaultTo('RS256')
        .check(sql`id_token_signed_response_alg in ('RS256', 'ES256', 'EdDSA')`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('id_token_signed_response_alg').execute();
  await sql`drop index signing_keys_current_idx`.execute(db);
  await sql`alter table signing_keys drop constraint signing_keys_algorithm_known`.execute(db);
}
