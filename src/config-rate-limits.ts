import { z } from 'zod';

/** A limit per minute: a whole number, `0` turning it off. */
const count = () =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number from 0 to 1000000')
    .transform(Number)
    .pipe(z.number().int().max(1_000_000, 'must be at most 1000000'));
const perMinute = (fallback: number) => count().default(fallback);

/**
 * The rate limits (README "Rate limits"; src/http/rate-limit.ts), each per minute, sized for many
 * people behind one address (docs/operating.md "Going to production"). Part of src/config.ts's
 * settings, in this order.
 */
export const rateLimitSettings = {
  RATE_LIMIT_PUBLIC_PER_MIN: perMinute(300).describe(
    'Per client IP on pages, public routes and 404s (static files are not counted); `0` turns it off. A sign-in through a site costs about 6; size it for the sign-ins a minute of everyone behind one address (docs/operating.md "Going to production").',
  ),
  RATE_LIMIT_TOKEN_PER_MIN: perMinute(600).describe(
    'Per authenticated client at the token, revocation, introspection and PAR endpoints, and for a public client (which proves only its public `client_id`) per client and IP; `0` turns it off.',
  ),
  RATE_LIMIT_SIGNIN_PER_MIN: perMinute(60).describe(
    "Per IP: refused form POSTs (a wrong password or code, a failed passkey, a stale form) and mobile verifies, and every sign-up and password-reset request; past it, that IP's forms are refused until the window ends; page loads and passkey options are not counted; `0` turns it off.",
  ),
  // No default here: unset, it follows an explicit RATE_LIMIT_SIGNIN_PER_MIN (which limited both
  // before the per-IP count was sized for a campus), else 10 (src/config.ts).
  RATE_LIMIT_ACCOUNT_PER_MIN: count()
    .optional()
    .describe(
      "Per account: password checks at sign-in (after the CSRF check; a browser holding the account's device cookie has its own count) and in the signed-in account's forms; unset, it is `RATE_LIMIT_SIGNIN_PER_MIN` when that is set, otherwise 10; `0` turns it off.",
    ),
  RATE_LIMIT_FAILED_AUTH_PER_MIN: perMinute(100).describe(
    "Per IP: failed client authentications (401 invalid_client), public clients' refused grants (400 invalid_grant) and 401s on bearer routes; past it, that IP is refused on those routes until the window ends; `0` turns it off.",
  ),
  RATE_LIMIT_BEARER_PER_MIN: perMinute(1200).describe('Per access token; `0` turns it off.'),
} as const;

/** RATE_LIMIT_ACCOUNT_PER_MIN when unset: an explicit RATE_LIMIT_SIGNIN_PER_MIN, else 10. */
export function accountLimit(
  parsed: { RATE_LIMIT_ACCOUNT_PER_MIN?: number | undefined; RATE_LIMIT_SIGNIN_PER_MIN: number },
  env: Record<string, string | undefined>,
): number {
  if (parsed.RATE_LIMIT_ACCOUNT_PER_MIN !== undefined) return parsed.RATE_LIMIT_ACCOUNT_PER_MIN;
  return env.RATE_LIMIT_SIGNIN_PER_MIN?.trim() ? parsed.RATE_LIMIT_SIGNIN_PER_MIN : 10;
}
