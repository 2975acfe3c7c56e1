import { z } from 'zod';
import { AA_TEXT_CONTRAST, contrastRatio, HEX_COLOR } from './lib/contrast.js';

/** What the service calls itself when BRAND_NAME is not set: on its pages and in the default MAIL_FROM. */
export const DEFAULT_SERVICE_NAME = 'idp';

/**
 * The light colours an accent is read against (public/styles.css): the white of the cards and of
 * the primary button's text, and the page's background around the cards.
 */
const ACCENT_BACKGROUNDS = [
  { color: '#ffffff', what: 'white (the cards and the text of the primary buttons)' },
  { color: '#f3f4f7', what: 'the page background #f3f4f7' },
] as const;

/** Why an accent colour cannot be used, or null when links and buttons in it keep WCAG AA contrast. */
export function accentColorProblem(hex: string): string | null {
  for (const { color, what } of ACCENT_BACKGROUNDS) {
    const ratio = contrastRatio(hex, color);
    if (ratio < AA_TEXT_CONTRAST)
      return `has a contrast ratio of ${(Math.floor(ratio * 100) / 100).toFixed(2)}:1 against ${what}; WCAG AA needs at least ${AA_TEXT_CONTRAST}:1 for text, so choose a darker colour`;
  }
  return null;
}

/** A logo's address: absolute https (no credentials), or a path on this service's own origin. */
function isLogoAddress(value: string): boolean {
  if (/^\/(?![/\\])/.test(value)) return !/[\s"'<>\\]/.test(value);
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** The branding settings, part of src/config.ts's `settings`. */
export const brandSettings = {
  BRAND_NAME: z
    .string()
    .trim()
    .min(1)
    .max(60, 'must be at most 60 characters')
    .regex(/^[^\p{Cc}\p{Cf}]+$/u, 'must not contain control or invisible characters')
    .default(DEFAULT_SERVICE_NAME)
    .describe(
      "The service's name: in the pages' header and titles, the passkey prompts, and the default `MAIL_FROM`.",
    ),
  BRAND_LOGO_URL: z
    .string()
    .trim()
    .max(2048)
    .refine(isLogoAddress, 'must be an https URL without credentials, or a path starting with a single /')
    .optional()
    .describe(
      'A logo shown beside the name in every page header (28 px high): an https URL, whose origin the pages’ CSP then admits for images, or a path on this origin.',
    ),
  BRAND_ACCENT_COLOR: z
    .string()
    .trim()
    .regex(HEX_COLOR, 'must be a colour written #rrggbb')
    .superRefine((value, ctx) => {
      const problem = HEX_COLOR.test(value) ? accentColorProblem(value) : null;
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .describe(
      'The colour of links and primary buttons in the light scheme (`#rrggbb`); refused at start-up below a 4.5:1 contrast (WCAG AA) against white and the page background. The dark scheme keeps its own.',
    ),
} as const;

/** `name <address>`, the name quoted (RFC 5322 §3.2.4) unless it is plain words. */
export function mailbox(name: string, address: string): string {
  const plain = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$/.test(name);
  return `${plain ? name : `"${name.replace(/["\\]/g, '\\$&')}"`} <${address}>`;
}
