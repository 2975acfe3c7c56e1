import { type Kysely, sql } from 'kysely';

/**
 * Sign-in for the official mobile app: single-use challenges bound to a device, and the devices
 * signed in, each with its Ed25519 public key and the grant its tokens belong to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mobile_challenges')
    // SHA-256 of the challenge: like every other server-issued secret, it is stored only hashed.
    .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('device_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('mobile_challenges_expires_idx')
    .on('mobile_challenges')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('mobile_devices')
    .addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('client_pk', 'bigint', (col) => col.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('device_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'bigint', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // The raw 32-byte Ed25519 public key, base64url without padding.
    .addColumn('public_key', 'text', (col) => col.notNull())
    // The grant the device's tokens belong to: revoking it ends the device's session.
    .addColumn('grant_id', 'bigint', (col) =>
      col.notNull().unique().references('grants.id').onDelete('cascade'),
    )
    // What the device said it is (its User-Agent at sign-in), for the account page.
    .addColumn('label', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('last_used_at', 'timestamptz', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  // One live registration per installation of the app.
  await sql`create unique index mobile_devices_live_device_idx on mobile_devices (client_pk, device_id)
    where revoked_at is null`.execute(db);
  await sql`create index mobile_devices_live_user_idx on mobile_devices (user_id) where revoked_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mobile_devices').execute();
  await db.schema.dropTable('mobile_challenges').execute();
}
