import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** What a link does when used: verify the user's address, or make its address the user's. */
export type EmailLinkPurpose = 'verify' | 'change';

/** A verification link as stored: the hash of its token, never the token. */
export interface NewEmailVerification {
  tokenHash: string;
  userId: number;
  email: string;
  purpose: EmailLinkPurpose;
  at: Date;
  expiresAt: Date;
}

/** A link that was just used. */
export interface UsedEmailLink {
  userId: number;
  email: string;
  purpose: EmailLinkPurpose;
}

export async function insertEmailVerification(
  db: Kysely<Database>,
  verification: NewEmailVerification,
): Promise<void> {
  await db
    .insertInto('email_verifications')
    .values({
      token_hash: verification.tokenHash,
      user_id: verification.userId,
      email: verification.email,
      purpose: verification.purpose,
      created_at: verification.at,
      expires_at: verification.expiresAt,
    })
    .execute();
}

/** The table as the link queries name it (`link`). */
type LinkScope = ExpressionBuilder<Database & { link: Database['email_verifications'] }, 'link'>;

/**
 * The link of `tokenHash` while it may be used: unused, unexpired, and for a `change` link the
 * newest of its user (only the newest works, whatever order requests commit in). Reading it and
 * using it (consumeEmailVerification) ask the same.
 */
function usableLink(eb: LinkScope, input: { tokenHash: string; now: Date }) {
  return eb.and([
    eb('link.token_hash', '=', input.tokenHash),
    eb('link.used_at', 'is', null),
    eb('link.expires_at', '>', input.now),
    eb.or([
      eb('link.purpose', '=', 'verify'),
      eb.not(
        eb.exists(
          eb
            .selectFrom('email_verifications as newer')
            .select('newer.id')
            .whereRef('newer.user_id', '=', 'link.user_id')
            .where('newer.purpose', '=', 'change')
            .whereRef('newer.id', '>', 'link.id'),
        ),
      ),
    ]),
  ]);
}

/**
 * Uses a link once (single use): one statement, so two concurrent uses cannot both
 * succeed. Undefined for an unknown, used or expired token, and for a `change` link that a newer
 * change request of the same user replaced (only the newest works, whatever order requests commit in).
 */
export async function consumeEmailVerification(
  db: Kysely<Database>,
  input: { tokenHash: string; now: Date },
): Promise<UsedEmailLink | undefined> {
  const row = await db
    .updateTable('email_verifications as link')
    .set({ used_at: input.now })
    .where((eb) => usableLink(eb, input))
    .returning(['link.user_id', 'link.email', 'link.purpose'])
    .executeTakeFirst();
  return row && { userId: Number(row.user_id), email: row.email, purpose: row.purpose };
}

/**
 * The address of the user's pending change: that of their newest `change` link while it is unused
 * and unexpired (older ones no longer work), else undefined.
 */
export async function findPendingEmailChange(
  db: Kysely<Database>,
  input: { userId: number; now: Date },
): Promise<{ email: string; expiresAt: Date } | undefined> {
  const row = await db
    .selectFrom('email_verifications')
    .select(['email', 'expires_at', 'used_at'])
    .where('user_id', '=', input.userId)
    .where('purpose', '=', 'change')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row || row.used_at !== null || row.expires_at <= input.now) return undefined;
  return { email: row.email, expiresAt: row.expires_at };
}

/** Deletes every verification link of an account (its deletion: the addresses go with it). */
export async function deleteEmailVerificationsOfUser(db: Kysely<Database>, userId: number): Promise<number> {
  const result = await db.deleteFrom('email_verifications').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The link of `tokenHash` while it may still be used (usableLink); reading it changes nothing, so
 * the page a mail scanner opens uses nothing.
 */
export async function findLiveEmailVerification(
  db: Kysely<Database>,
  input: { tokenHash: string; now: Date },
): Promise<UsedEmailLink | undefined> {
  const row = await db
    .selectFrom('email_verifications as link')
    .select(['link.user_id', 'link.email', 'link.purpose'])
    .where((eb) => usableLink(eb, input))
    .executeTakeFirst();
  return row && { userId: Number(row.user_id), email: row.email, purpose: row.purpose };
}
