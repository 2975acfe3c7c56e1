import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { NO_PASSWORD } from '../../lib/password.js';
import { isUniqueViolation } from '../../lib/validation.js';
import { insertUser, markEmailVerified } from './accounts.repository.js';
import { normalizeUsername } from './accounts.schemas.js';
import { type CreatedUser, UsernameTaken } from './accounts.service.js';
import type { User } from './user.js';

/**
 * An account made by a first sign-in through another provider: no password (a reset link sets one),
 * the provider's address confirmed only when the provider says it verified it, and then subject to
 * the rule of markEmailVerified (the first account to confirm an address keeps its claim). The
 * username's shape is the caller's to check first (usernameFormatProblem); `then` runs in the
 * transaction (the link to the provider is made with the account or not at all).
 * @throws UsernameTaken
 */
export async function createAccountWithoutPassword(
  db: Kysely<Database>,
  ctx: Context,
  input: { username: string; email: string | null; emailVerified: boolean },
  then: (trx: Kysely<Database>, user: User) => Promise<void>,
): Promise<CreatedUser> {
  const username = normalizeUsername(input.username);
  const at = ctx.clock.now();
  try {
    return await inTransaction(db, async (trx) => {
      const user = await insertUser(trx, {
        username,
        passwordHash: NO_PASSWORD,
        email: input.email,
        emailVerified: false,
        displayName: null,
        verificationLevel: 0,
        at,
      });
      if (input.email && input.emailVerified)
        await markEmailVerified(trx, { userId: user.id, email: input.email, at });
      await then(trx, user);
      return { id: user.id, username: user.username };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsernameTaken(username);
    throw error;
  }
}
