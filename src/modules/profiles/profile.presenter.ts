import type { User } from '../accounts/user.js';
import { claimsFor } from '../oauth/scopes.js';
import { type SearchResult, VERIFICATION_TIERS, type VerificationTier } from './profiles.schemas.js';

/** The fields of a user the presenters read: a full row, or a search query's narrower selection. */
export type PresentableUser = Pick<
  User,
  | 'id'
  | 'username'
  | 'displayName'
  | 'avatarUrl'
  | 'email'
  | 'emailVerified'
  | 'emailClaimWithheld'
  | 'verificationLevel'
  | 'gameName'
  | 'gameUrl'
  | 'tagLabel'
  | 'tagKind'
  | 'tagSlug'
>;

/** The fields presentSearchResult reads, so a search query can select only these. */
export type SearchableUser = Pick<
  User,
  'id' | 'username' | 'displayName' | 'avatarUrl' | 'verificationLevel'
>;

/** Where the default avatar is served (search shows it for a user without an avatar). */
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
 * The userinfo payload for the scopes a token was granted:
 * `sub` and `id` always, every other claim only when its scope was granted; fields the user lacks
 * are omitted. One function feeds userinfo, `/me` and id_tokens, so they can never disagree.
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

  const name = user.displayName ?? user.username;
  // docs/api.md: "Absolute avatar URL, or empty".
  const picture = user.avatarUrl ? absoluteAvatarUrl(user.avatarUrl, publicUrl) : '';
  const gameLinked = user.gameUrl !== null;
  put('name', name);
  put('nickname', name);
  put('preferred_username', user.username);
  put('username', user.username);
  // docs/api.md: display_name is "the name set by the user", so a user who never set one lacks it
  // (omitted, as docs/api.md allows for missing fields); `name` and `nickname` carry the fallback.
  put('display_name', user.displayName ?? undefined);
  put('picture', picture);
  put('avatar_url', picture);
  // docs/api.md: "string or boolean": the link to the game account when there is one, false otherwise.
  put('game', gameLinked ? user.gameUrl : false);
  put('game_name', gameLinked ? (user.gameName ?? undefined) : undefined);
  put('game_linked', gameLinked);
  if (user.tagLabel !== null && user.tagKind !== null && user.tagSlug !== null) {
    put('tag', { label: user.tagLabel, kind: user.tagKind, slug: user.tagSlug });
  }

  // Without an e-mail there is nothing to confirm either: both are omitted.
  if (user.email !== null) {
    put('email', user.email);
    // docs/integrating.md: the first account to confirm an address owns its verified status; a
    // later confirmation of the same address by another account is kept, but not released, so a
    // site that links accounts by verified e-mail is never handed someone else's address.
    put('email_verified', user.emailVerified && !user.emailClaimWithheld);
  }

  const level = user.verificationLevel;
  put('verified', level);
  put('verification_level', level);
  put('verification_tier', verificationTier(level));
  put('verified_badge', level >= 1);

  return payload;
}

/**
 * The `/me` body (docs/api.md Profile): `ok`, the user payload as `user`, and every
 * userinfo field merged in at the top level. Build `payload` with presentUserinfo for the token's
 * scopes; `idp users update` shows it for all scopes.
 */
export function presentMe(payload: Record<string, unknown>): Record<string, unknown> {
  return { ok: true, user: payload, ...payload };
}

/**
 * One entry of the user search. Unlike userinfo's `picture`, a user
 * without an avatar shows the service's default avatar, and a user without a
 * display name shows the username.
 */
export function presentSearchResult(user: SearchableUser, premium: boolean, publicUrl: string): SearchResult {
  return {
    id: user.id,
    username: user.username,
    display_name: user.displayName ?? user.username,
    avatar_url: absoluteAvatarUrl(user.avatarUrl ?? DEFAULT_AVATAR_PATH, publicUrl),
    premium,
    verification_tier: verificationTier(user.verificationLevel),
    verified: user.verificationLevel >= 1,
    url: `/${user.username}`,
  };
}
