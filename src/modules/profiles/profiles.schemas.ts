import { z } from 'zod';
import { isLoopbackHost } from '../../lib/redirect-uri.js';
import { displayNameSchema, emailSchema } from '../accounts/accounts.schemas.js';

/**
 * The profile fields an operator (and later the account page) may change, and the shapes the
 * profile is shown in: userinfo / `/me` and the search result.
 */

const MAX_URL_LENGTH = 2048;

/** No control, format, private-use or unassigned characters: they hide text or spoof it. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/u;

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/**
 * An avatar: an absolute https URL (plain http on a loopback host only, for development), or a
 * path served by this service, starting with exactly one `/` (`//host/x` would be another host,
 * and browsers read `/\host` the same way).
 */
export const avatarUrlSchema = z
  .string()
  .trim()
  .max(MAX_URL_LENGTH, `avatar URL must be at most ${MAX_URL_LENGTH} characters`)
  .refine((value) => {
    if (value.startsWith('/'))
      return !/^\/[/\\]/.test(value) && !/[\s\\]/.test(value) && !INVISIBLE.test(value);
    const url = parseUrl(value);
    if (!url || url.username || url.password) return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  }, 'avatar URL must be an absolute https URL (plain http on loopback hosts only) or a path starting with a single "/"');

/** The link to the user's game account: an absolute http(s) URL. */
export const gameUrlSchema = z
  .string()
  .trim()
  .max(MAX_URL_LENGTH, `game URL must be at most ${MAX_URL_LENGTH} characters`)
  .refine((value) => {
    const url = parseUrl(value);
    return (
      url !== null &&
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      !url.username &&
      !url.password
    );
  }, 'game URL must be an absolute http(s) URL');

export const gameNameSchema = z
  .string()
  .transform((value) => value.normalize('NFC').trim())
  .refine((value) => value.length >= 1 && value.length <= 64, {
    message: 'game name must be 1–64 characters',
  })
  .refine((value) => !INVISIBLE.test(value), {
    message: 'game name must not contain control or invisible characters',
  });

export const tagLabelSchema = z
  .string()
  .transform((value) => value.normalize('NFC').trim())
  .refine((value) => value.length >= 1 && value.length <= 32, {
    message: 'tag label must be 1–32 characters',
  })
  .refine((value) => !INVISIBLE.test(value), {
    message: 'tag label must not contain control or invisible characters',
  });

export const tagKindSchema = z
  .string()
  .trim()
  .regex(/^[a-z0-9_-]{1,32}$/, 'tag kind must be 1–32 characters of a–z, 0–9, _ and -');

export const tagSlugSchema = z
  .string()
  .trim()
  .regex(/^[a-z0-9_-]{1,64}$/, 'tag slug must be 1–64 characters of a–z, 0–9, _ and -');

const LEVEL_MESSAGE = 'verification level must be 0, 1 or 2';

/** An empty (or blank) value, which removes an optional field. */
const blank = z
  .string()
  .refine((value) => value.trim() === '')
  .transform(() => null);

/**
 * A change to a profile: every field optional, only the given ones change. An empty display name
 * or avatar URL removes it. Game name and URL go together, as do the three parts of a tag;
 * `clearGame` / `clearTag` remove them and cannot be combined with new values.
 */
export const updateProfileSchema = z
  .object({
    displayName: z.union([blank, displayNameSchema]).optional(),
    avatarUrl: z.union([blank, avatarUrlSchema]).optional(),
    // A string must be a digit: verificationLevelSchema's coercion alone would read "" as 0.
    verificationLevel: z
      .union([z.number(), z.string().trim().regex(/^\d$/, LEVEL_MESSAGE).transform(Number)])
      .pipe(z.number().int(LEVEL_MESSAGE).min(0, LEVEL_MESSAGE).max(2, LEVEL_MESSAGE))
      .optional(),
    email: emailSchema.optional(),
    emailVerified: z.boolean().optional(),
    gameName: gameNameSchema.optional(),
    gameUrl: gameUrlSchema.optional(),
    clearGame: z.boolean().default(false),
    tagLabel: tagLabelSchema.optional(),
    tagKind: tagKindSchema.optional(),
    tagSlug: tagSlugSchema.optional(),
    clearTag: z.boolean().default(false),
  })
  .superRefine((input, ctx) => {
    const game = [input.gameName, input.gameUrl].filter((value) => value !== undefined).length;
    if (input.clearGame && game > 0)
      ctx.addIssue({ code: 'custom', message: 'give either a new game (name and URL) or no-game, not both' });
    else if (game === 1)
      ctx.addIssue({ code: 'custom', message: 'game name and game URL must be given together' });
    const tag = [input.tagLabel, input.tagKind, input.tagSlug].filter((value) => value !== undefined).length;
    if (input.clearTag && tag > 0)
      ctx.addIssue({
        code: 'custom',
        message: 'give either a new tag (label, kind and slug) or no-tag, not both',
      });
    else if (tag > 0 && tag < 3)
      ctx.addIssue({ code: 'custom', message: 'tag label, tag kind and tag slug must be given together' });
  });

export type UpdateProfileInput = z.input<typeof updateProfileSchema>;

export const VERIFICATION_TIERS = ['none', 'standard', 'special'] as const;
export type VerificationTier = (typeof VERIFICATION_TIERS)[number];

const tagSchema = z.object({ label: z.string(), kind: z.string(), slug: z.string() });

/**
 * Userinfo, field by field. `sub` and `id` always; the rest
 * only with their scope, and only when the user has them (game_name, tag, email).
 */
export const userinfoSchema = z.object({
  sub: z.string(),
  id: z.number().int(),
  name: z.string().optional(),
  nickname: z.string().optional(),
  preferred_username: z.string().optional(),
  username: z.string().optional(),
  display_name: z.string().optional(),
  picture: z.string().optional(),
  avatar_url: z.string().optional(),
  game: z.union([z.string(), z.literal(false)]).optional(),
  game_name: z.string().optional(),
  game_linked: z.boolean().optional(),
  tag: tagSchema.optional(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  verified: z.number().int().optional(),
  verification_level: z.number().int().min(0).max(2).optional(),
  verification_tier: z.enum(VERIFICATION_TIERS).optional(),
  verified_badge: z.boolean().optional(),
});

export type Userinfo = z.output<typeof userinfoSchema>;

/** One entry of the user search. */
export const searchResultSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  display_name: z.string(),
  avatar_url: z.string(),
  premium: z.boolean(),
  verification_tier: z.enum(VERIFICATION_TIERS),
  verified: z.boolean(),
  url: z.string(),
});

export type SearchResult = z.output<typeof searchResultSchema>;
