import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/schema.js';
import { claimsFor } from '../oauth/scopes.js';
import { type SearchResult, VERIFICATION_TIERS, type VerificationTier } from './profiles.schemas.js';

/** A `users` row, until this module reads the `User` of accounts/user.ts. */
type UserRow = Selectable<UsersTable>;

/** The fields of a user the presenters read: a full row, or a search query's narrower selection. */
export type PresentableUser = Pick<
  UserRow,
  | 'id'
  | 'username'
  | 'display_name'
  | 'avatar_url'
  | 'email'
  | 'email_verified'
  | 'verification_level'
  | 'game_name'
  | 'game_url'
  | 'tag_label'
  | 'tag_kind'
  | 'tag_slug'
>;

/** The fields presentSearchResult reads, so a search query can select only these. */
export type SearchableUser = Pick<
  UserRow,
  'id' | 'username' | 'display_name' | 'avatar_url' | 'verification_level'
>;

/** Where the default avatar is served (CONTRACT.md §6: search shows it for a user without an avatar). */
export const DEFAULT_AVATAR_PATH = '/static/default-avatar.png';

/**
 * A stored avatar as an absolute URL. An absolute URL is kept as it is; a path is served by this
 * service, so it is appended to PUBLIC_URL (string concatenation, not `new URL(path, base)`,
 * which would drop a path prefix of PUBLIC_URL such as `https://example.com/idp`).
 */
export function absoluteAvatarUrl(stored: string, publicUrl: string): string {
  return stored.startsWith('/') ? `${publicUrl.replace(/\/+$/, '')}${stored}` : stored;
}

export function verificationTier(level: number): VerificationTier {
  return VERIFICATION_TIERS[level] ?? 'none';
}

/**
 * The userinfo payload of a user, for the scopes a token was granted (CONTRACT.md §5): `sub` and
 * `id` always, every other claim only when its scope was granted. The same function feeds
 * userinfo, `/me` and id_tokens, so they can never disagree.
 *
 * Field meanings and types follow SPEC.md "User profile (userinfo)"; fields the user lacks are
 * omitted, as SPEC.md allows (`game_name` without a linked game, `tag` without a tag, `email` and
 * `email_verified` without an e-mail).
 */
export function presentUserinfo(
  user: PresentableUser,
  scopes: readonly string[],
  publicUrl: string,
): Record<string, unknown> {
  const claims = claimsFor(scopes);
  const payload: Record<string, unknown> = { sub: String(user.id), id: user.id };
  // Each claim is released only when a granted scope names it (SCOPES in oauth/scopes.ts).
  const put = (claim: string, value: unknown) => {
    if (claims.has(claim) && value !== undefined) payload[claim] = value;
  };

  const name = user.display_name ?? user.username;
  // SPEC.md: "Absolute avatar URL, or empty".
  const picture = user.avatar_url ? absoluteAvatarUrl(user.avatar_url, publicUrl) : '';
  const gameLinked = user.game_url !== null;
  put('name', name);
  put('nickname', name);
  put('preferred_username', user.username);
  put('username', user.username);
  // SPEC.md: display_name is "the name set by the user", so a user who never set one lacks it
  // (omitted, as SPEC.md allows for missing fields); `name` and `nickname` carry the fallback.
  put('display_name', user.display_name ?? undefined);
  put('picture', picture);
  put('avatar_url', picture);
  // SPEC.md: "string or boolean": the link to the game account when there is one, false otherwise.
  put('game', gameLinked ? user.game_url : false);
  put('game_name', gameLinked ? (user.game_name ?? undefined) : undefined);
  put('game_linked', gameLinked);
  if (user.tag_label !== null && user.tag_kind !== null && user.tag_slug !== null) {
    put('tag', { label: user.tag_label, kind: user.tag_kind, slug: user.tag_slug });
  }

  // Without an e-mail there is nothing to confirm either: both are omitted.
  if (user.email !== null) {
    put('email', user.email);
    put('email_verified', user.email_verified);
  }

  const level = user.verification_level;
  put('verified', level);
  put('verification_level', level);
  put('verification_tier', verificationTier(level));
  put('verified_badge', level >= 1);

  return payload;
}

/**
 * The `/me` body (SPEC.md Profile, CONTRACT.md §6): `ok`, the user payload as `user`, and every
 * userinfo field merged in at the top level. Build `payload` with presentUserinfo for the token's
 * scopes; `idp users update` shows it for all scopes.
 */
export function presentMe(payload: Record<string, unknown>): Record<string, unknown> {
  return { ok: true, user: payload, ...payload };
}

/**
 * One entry of the user search (SPEC.md "User search result"). Unlike userinfo's `picture`, a user
 * without an avatar shows the service's default avatar (CONTRACT.md §6), and a user without a
 * display name shows the username.
 */
export function presentSearchResult(user: SearchableUser, premium: boolean, publicUrl: string): SearchResult {
  return {
    id: user.id,
    username: user.username,
    display_name: user.display_name ?? user.username,
    avatar_url: absoluteAvatarUrl(user.avatar_url ?? DEFAULT_AVATAR_PATH, publicUrl),
    premium,
    verification_tier: verificationTier(user.verification_level),
    verified: user.verification_level >= 1,
    url: `/${user.username}`,
  };
}
