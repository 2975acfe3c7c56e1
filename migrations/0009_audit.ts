import { type Kysely, sql } from 'kysely';

/**
 * The audit log: sign-ins and failed sign-ins, consents, revocations, client and key changes,
 * charges and credits, with who, what, when and from where. Append-only, like the wallet ledger:
 * the trigger function of migrations/0006 refuses updates and deletes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('at', 'timestamptz', (col) => col.notNull())
    // `user:<id>`, `client:<client_id>`, `operator` (the CLI) or `anonymous`.
    .addColumn('actor', 'text', (col) => col.notNull())
    .addColumn('action', 'text', (col) => col.notNull())
    // What the action was about: `user:<id>`, `client:<client_id>`, `key:<kid>`, `tx:<id>`…
    .addColumn('subject', 'text')
    // The client IP (as TRUST_PROXY allows reading it); null for the CLI.
    .addColumn('ip', 'text')
    .addColumn('details', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema.createIndex('audit_events_at_idx').on('audit_events').column('at').execute();
  await sql`
    create trigger audit_events_append_only before update or delete on audit_events
    for each row execute function refuse_change_of_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
