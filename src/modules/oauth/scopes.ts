/**
 * The scopes of the service: what each one shares, in plain words for the consent
 * page, and which userinfo claims it releases. `sub` and `id` are always returned.
 */
export const SCOPES = {
  openid: {
    description: 'Confirm to the site who you are (sign you in)',
    claims: [],
  },
  profile: {
    description: 'Your username, display name, avatar, linked game account and tag',
    claims: [
      'name',
      'nickname',
      'preferred_username',
      'username',
      'display_name',
      'picture',
      'avatar_url',
      'game',
      'game_name',
      'game_linked',
      'tag',
    ],
  },
  email: {
    description: 'Your e-mail address and whether it is confirmed',
    claims: ['email', 'email_verified'],
  },
  verified: {
    description: 'Your verification level and badge',
    claims: ['verified', 'verification_level', 'verification_tier', 'verified_badge'],
  },
  wallet: {
    description: 'Charge coins from your wallet and see the charges it made',
    claims: [],
  },
  offline_access: {
    description: 'Keep access while you are away (until you revoke it)',
    claims: [],
  },
} as const;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

/** Missing `scope` means these (Authentication 4). */
export const DEFAULT_SCOPES: readonly Scope[] = ['profile', 'email', 'verified', 'openid'];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** The claims a set of granted scopes releases (besides `sub` and `id`). */
export function claimsFor(scopes: readonly string[]): Set<string> {
  const claims = new Set<string>();
  for (const scope of scopes) if (isScope(scope)) for (const claim of SCOPES[scope].claims) claims.add(claim);
  return claims;
}

/** Scopes in their canonical order, without duplicates. */
export function normalizeScopes(scopes: Iterable<string>): Scope[] {
  const wanted = new Set(scopes);
  return ALL_SCOPES.filter((scope) => wanted.has(scope));
}
