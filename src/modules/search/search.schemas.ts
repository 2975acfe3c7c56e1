import { z } from 'zod';
import { searchResultSchema } from '../profiles/profiles.schemas.js';

/** Bounds of GET /api/users/search. */
export const SEARCH_QUERY_MAX_LENGTH = 64;
export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 50;

/**
 * What is searched for: `q` as sent, NFC-normalized (display names are stored NFC) and with
 * surrounding whitespace removed. The length bound applies to this term, counted in code points.
 */
export function searchTerm(q: string): string {
  return q.normalize('NFC').trim();
}

/** Control characters (NUL among them, which PostgreSQL refuses in text) are never in a name. */
const CONTROL = /\p{Cc}/u;

/**
 * The query string. A repeated parameter arrives as an array and so fails `z.string()` (400).
 * Unknown parameters are ignored.
 * - `q`: required; 1–64 characters once trimmed; kept as sent (the response echoes it).
 * - `username`: `1` searches usernames only; any other value (`0`, `true`, empty) does not restrict.
 * - `limit`: digits only; default 20, values above 50 are capped at 50, 0 is refused.
 */
export const searchQuerySchema = z.object({
  q: z
    .string({ error: 'q is required' })
    .refine((value) => {
      const length = [...searchTerm(value)].length;
      return length >= 1 && length <= SEARCH_QUERY_MAX_LENGTH;
    }, `q must be 1–${SEARCH_QUERY_MAX_LENGTH} characters (surrounding whitespace is not counted)`)
    .refine((value) => !CONTROL.test(value), 'q must not contain control characters'),
  username: z
    .string({ error: 'username must be given once' })
    .optional()
    .transform((value) => value === '1'),
  limit: z
    .string({ error: 'limit must be given once' })
    .regex(/^\d{1,10}$/, 'limit must be a whole number from 1')
    .transform(Number)
    .refine((value) => value >= 1, 'limit must be at least 1')
    .transform((value) => Math.min(value, SEARCH_LIMIT_MAX))
    .optional()
    .transform((value) => value ?? SEARCH_LIMIT_DEFAULT),
});

export type SearchQuery = z.output<typeof searchQuerySchema>;

export const searchResponseSchema = z.object({
  ok: z.literal(true),
  /** `q` exactly as sent. */
  query: z.string(),
  results: z.array(searchResultSchema),
});

export type SearchResponse = z.output<typeof searchResponseSchema>;
