import { type Kysely, sql, type Transaction, type Updateable } from 'kysely';
import type { Database, UsersTable } from '../../db/schema.js';
import { usernameSkeleton } from '../../lib/username-skeleton.js';
import { toUser, USER_COLUMNS, type User } from './user.js';

/** A new account, its password already hashed. */
export interface NewUser {
  username: string;
  passwordHash: string;
  email: string | null;
  emailVerified: boolean;
  displayName: string | null;
  verificationLevel: number;
  at: Date;
}

/**
 * The columns a change may write: every field of a user but its id, its username and its times
 * (`updatedAt` always, the rest when given).
 */
export type UserChanges = Partial<
  Omit<User, 'id' | 'username' | 'createdAt' | 'updatedAt'> & { passwordHash: string }
> & {
  updatedAt: Date;
};

const CHANGE_COLUMNS = {
  email: 'email',
  emailVerified: 'email_verified',
  emailClaimWithheld: 'email_claim_withheld',
  displayName: 'display_name',
  avatarUrl: 'avatar_url',
  verificationLevel: 'verification_level',
  gameName: 'game_name',
  gameUrl: 'game_url',
  tagLabel: 'tag_label',
  tagKind: 'tag_kind',
  tagSlug: 'tag_slug',
  disabledAt: 'disabled_at',
  deletedAt: 'deleted_at',
  passwordHash: 'password_hash',
  updatedAt: 'updated_at',
} as const satisfies Record<keyof UserChanges, keyof UsersTable>;

/** Inserts a user with the skeleton of its username; a name like an existing one fails the unique index. */
export async function insertUser(db: Kysely<Database>, user: NewUser): Promise<User> {
  const row = await db
    .insertInto('users')
    .values({
      username: user.username,
      username_skeleton: usernameSkeleton(user.username),
      password_hash: user.passwordHash,
      email: user.email,
      email_verified: user.emailVerified,
      display_name: user.displayName,
      verification_level: user.verificationLevel,
      created_at: user.at,
      updated_at: user.at,
    })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
  return toUser(row);
}

function byUsername(db: Kysely<Database>, username: string) {
  // Case-insensitive, served by the unique index on lower(username).
  return db.selectFrom('users').where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()));
}

export async function findUserByUsername(db: Kysely<Database>, username: string): Promise<User | undefined> {
  const row = await byUsername(db, username).select(USER_COLUMNS).executeTakeFirst();
  return row && toUser(row);
}

/** Whether a user has this name or one like it (the skeleton: case, look-alikes), deleted ones included. */
export async function isUsernameTaken(db: Kysely<Database>, username: string): Promise<boolean> {
  const key = usernameSkeleton(username);
  const found = db.selectFrom('users').select('id').where('username_skeleton', '=', key);
  return (await found.executeTakeFirst()) !== undefined;
}

/** The user and its password hash, for `authenticate`; a deleted account has none (answered as unknown). */
export async function findCredentials(
  db: Kysely<Database>,
  username: string,
): Promise<{ user: User; passwordHash: string } | undefined> {
  const row = await byUsername(db, username)
    .select([...USER_COLUMNS, 'password_hash'])
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row && { user: toUser(row), passwordHash: row.password_hash };
}

/** The user by username (case-insensitive), locked until the transaction ends (a read-modify-write). */
export async function lockUserByUsername(
  trx: Transaction<Database>,
  username: string,
): Promise<User | undefined> {
  const row = await byUsername(trx, username).select(USER_COLUMNS).forUpdate().executeTakeFirst();
  return row && toUser(row);
}

/** The user by id, locked until the transaction ends (a read-modify-write: a reset, an e-mail change). */
export async function lockUserById(trx: Transaction<Database>, userId: number): Promise<User | undefined> {
  const row = await trx
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
  return row && toUser(row);
}

/** Writes the given fields of one user and returns the user as it is now. */
export async function updateUser(db: Kysely<Database>, userId: number, changes: UserChanges): Promise<User> {
  const set: Updateable<UsersTable> = {};
  // A new address starts with its claim released; whether it stays so is decided when it is
  // confirmed (markEmailVerified).
  if (changes.email !== undefined) set.email_claim_withheld = false;
  for (const [field, value] of Object.entries(changes))
    if (value !== undefined)
      (set as Record<string, unknown>)[CHANGE_COLUMNS[field as keyof UserChanges]] = value;
  const row = await db
    .updateTable('users')
    .set(set)
    .where('id', '=', userId)
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
  return toUser(row);
}

export async function findUserById(db: Kysely<Database>, userId: number): Promise<User | undefined> {
  const row = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirst();
  return row && toUser(row);
}

/**
 * Takes a password-check slot for the user and source (see migrations/0012) in one statement:
 * counts this attempt in the current window, or starts a new window when the last one began
 * `windowMs` ago or more. Returns the attempts in the window, this one included. Concurrent
 * attempts queue on the row, so each gets its own number and none slips past a limit.
 */
export async function countSignInAttempt(
  db: Kysely<Database>,
  attempt: { userId: number; source: string },
  now: Date,
  windowMs: number,
): Promise<number> {
  const windowStart = new Date(now.getTime() - windowMs);
  const row = await db
    .insertInto('sign_in_attempts')
    .values({ user_id: attempt.userId, source: attempt.source, attempts: 1, window_started_at: now })
    .onConflict((conflict) =>
      conflict.columns(['user_id', 'source']).doUpdateSet((eb) => ({
        attempts: eb
          .case()
          .when('sign_in_attempts.window_started_at', '<=', windowStart)
          .then(1)
          .else(eb('sign_in_attempts.attempts', '+', 1))
          .end(),
        window_started_at: eb
          .case()
          .when('sign_in_attempts.window_started_at', '<=', windowStart)
          .then(now)
          .else(eb.ref('sign_in_attempts.window_started_at'))
          .end(),
      })),
    )
    .returning('attempts')
    .executeTakeFirstOrThrow();
  return row.attempts;
}

/**
 * After a successful sign-in: the count of that source starts again. Without a source (a password
 * reset, an operator's unlock, a deletion) every count of the user does, and so does the run of
 * wrong second-step codes: every lockout of the account ends.
 */
export async function clearSignInAttempts(
  db: Kysely<Database>,
  userId: number,
  source?: string,
): Promise<void> {
  let query = db.deleteFrom('sign_in_attempts').where('user_id', '=', userId);
  if (source !== undefined) query = query.where('source', '=', source);
  await query.execute();
  if (source === undefined) await clearSecondFactorFailures(db, userId);
}

/**
 * Takes a slot for one second-step check of the user, across sign-in windows (migrations/0030),
 * in one statement: the number of checks since the last one that passed, this one included.
 * Past `max`, only a trusted source (a browser or app device that signed in before) gets a slot;
 * anyone else gets null and no code is checked. Concurrent checks queue on the row, so each gets
 * its own number and none slips past the cap.
 */
export async function takeSecondFactorSlot(
  db: Kysely<Database>,
  input: { userId: number; trusted: boolean; max: number; at: Date },
): Promise<number | null> {
  const row = await db
    .insertInto('second_factor_failures')
    .values({ user_id: input.userId, failures: 1, last_checked_at: input.at })
    .onConflict((conflict) => {
      const update = conflict.column('user_id').doUpdateSet((eb) => ({
        failures: eb('second_factor_failures.failures', '+', 1),
        last_checked_at: input.at,
      }));
      return input.trusted ? update : update.where('second_factor_failures.failures', '<', input.max);
    })
    .returning('failures')
    .executeTakeFirst();
  return row?.failures ?? null;
}

/** Second-step checks of the user since the last one that passed (0 when none failed). */
export async function countSecondFactorFailures(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('second_factor_failures')
    .select('failures')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.failures ?? 0;
}

/** A passed second factor (or any end of every lockout): the run of wrong codes ends. */
export async function clearSecondFactorFailures(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('second_factor_failures').where('user_id', '=', userId).execute();
}

/** Namespace of the advisory locks that serialise the confirmations of one address. */
const EMAIL_CONFIRMATION_LOCK = 0x656d6c76; // 'emlv'

/**
 * Marks the user's address confirmed, when it is still `email` (undefined otherwise). The one place
 * that decides the `email_verified` claim: the first account to confirm an address owns its
 * verified status, so when another account (case-insensitive; deleted ones have no address)
 * holds the claim for the same address, this confirmation is recorded but `email_claim_withheld`
 * is set and the claim stays false (docs/integrating.md). Confirmations of one address are serialised
 * by a transaction-scoped lock, so two at once cannot both be first: run it in a transaction.
 */
export async function markEmailVerified(
  db: Kysely<Database>,
  input: { userId: number; email: string; at: Date },
): Promise<{ claimWithheld: boolean } | undefined> {
  await sql`select pg_advisory_xact_lock(${EMAIL_CONFIRMATION_LOCK}::int4, hashtext(${input.email.toLowerCase()}::text))`.execute(
    db,
  );
  const row = await db
    .updateTable('users')
    .set((eb) => ({
      email_verified: true,
      email_claim_withheld: eb
        .exists(
          eb
            .selectFrom('users as other')
            .select('other.id')
            .where((inner) => inner(inner.fn('lower', ['other.email']), '=', input.email.toLowerCase()))
            .where('other.email_verified', '=', true)
            .where('other.email_claim_withheld', '=', false)
            .where('other.id', '!=', input.userId),
        )
        .$castTo<boolean>(),
      updated_at: input.at,
    }))
    .where('id', '=', input.userId)
    .where('email', '=', input.email)
    .where('deleted_at', 'is', null)
    .returning('email_claim_withheld')
    .executeTakeFirst();
  return row && { claimWithheld: row.email_claim_withheld };
}

/**
 * The accounts a reset link may go to (docs/pages.md `/password/forgot`): by username
 * (case-insensitive, as sign-in finds it) or by e-mail address (case-insensitive: the index on
 * lower(email); several accounts may share one), and only those that are neither deleted nor
 * disabled and have an address.
 */
export async function findPasswordResetRecipients(
  db: Kysely<Database>,
  login: { username: string } | { email: string },
): Promise<User[]> {
  const query =
    'username' in login
      ? byUsername(db, login.username)
      : db.selectFrom('users').where((eb) => eb(eb.fn('lower', ['email']), '=', login.email.toLowerCase()));
  const rows = await query
    .select(USER_COLUMNS)
    .where('email', 'is not', null)
    .where('deleted_at', 'is', null)
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .limit(MAX_RESET_RECIPIENTS)
    .execute();
  return rows.map(toUser);
}

/** No address is shared by more accounts than this in practice; the bound keeps one request's work small. */
const MAX_RESET_RECIPIENTS = 20;
