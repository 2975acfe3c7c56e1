import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { InvalidRequest } from '../../lib/errors.js';
import { hashPassword } from '../../lib/password.js';
import { isUniqueViolation, parseInput } from '../../lib/validation.js';
import { insertUser } from './accounts.repository.js';
import { type CreateUserInput, createUserSchema } from './accounts.schemas.js';

export interface CreatedUser {
  id: number;
  username: string;
}

/** Creates an account. The username is normalized; a case-insensitive duplicate is refused. */
export async function createUser(
  db: Kysely<Database>,
  clock: Clock,
  input: CreateUserInput,
): Promise<CreatedUser> {
  const data = parseInput(createUserSchema, input);
  const now = clock.now();
  try {
    const row = await insertUser(db, {
      username: data.username,
      password_hash: await hashPassword(data.password),
      email: data.email ?? null,
      email_verified: data.email ? data.emailVerified : false,
      display_name: data.displayName ?? null,
      verification_level: data.verificationLevel,
      created_at: now,
      updated_at: now,
    });
    return { id: row.id, username: row.username };
  } catch (error) {
    if (isUniqueViolation(error)) throw new InvalidRequest(`username "${data.username}" is already taken`);
    throw error;
  }
}
