import type { Config } from '../config.js';
import { darken } from '../lib/contrast.js';
import { type VersionedAsset, versionedAsset } from './assets/stylesheet.js';

/** The operator's branding (BRAND_* settings), as the pages use it. */
export interface Brand {
  name: string;
  /** The header's logo: its address, and the origin the pages' CSP must admit (null on this origin). */
  logo: { src: string; origin: string | null } | null;
  /** The generated stylesheet of the accent colour, when one is set. */
  stylesheet: VersionedAsset | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The branding of every page (src/web/brand.ts). */
    brand: Brand;
  }
}

export const BRAND_STYLESHEET_PATH = '/assets/brand.css';

/**
 * The accent as CSS custom properties, for the light scheme only: the colour was checked against
 * the light backgrounds (src/config-brand.ts), and the dark scheme's own accent is light on dark.
 * A stylesheet of its own, since the CSP (`style-src 'self'`) admits no inline style.
 */
function accentStylesheet(accent: string): string {
  return `@media (prefers-color-scheme: light) {\n  :root {\n    --accent: ${accent};\n    --accent-hover: ${darken(accent, 0.15)};\n  }\n}\n`;
}

export function brandOf(config: Pick<Config, 'BRAND_NAME' | 'BRAND_LOGO_URL' | 'BRAND_ACCENT_COLOR'>): Brand {
  const logoUrl = config.BRAND_LOGO_URL;
  const logo = logoUrl
    ? { src: logoUrl, origin: logoUrl.startsWith('/') ? null : new URL(logoUrl).origin }
    : null;
  const stylesheet = config.BRAND_ACCENT_COLOR
    ? versionedAsset(
        BRAND_STYLESHEET_PATH,
        Buffer.from(accentStylesheet(config.BRAND_ACCENT_COLOR.toLowerCase())),
      )
    : null;
  return { name: config.BRAND_NAME, logo, stylesheet };
}
