import type { FastifyReply } from 'fastify';
import type { Locale } from './i18n/index.js';

/** What a page's CSP admits besides this origin. */
export interface PageSources {
  /** Origins the page shows images from (the account page's avatar, an app's logo). */
  images?: readonly string[] | undefined;
  /**
   * Redirect URIs the page's forms may end at: the CSP's form-action governs the redirects that
   * follow a form's POST too (CSP Level 3 §6.4.1; Chromium blocks them), and the consent form's
   * answer, or a sign-in that resumes an app's request, ends at that app's redirect_uri.
   */
  forms?: readonly string[] | undefined;
}

/** A URI scheme (RFC 3986 §3.1) with its colon: what a CSP scheme-source is. */
const SCHEME = /^[a-z][a-z0-9+.-]*:$/;

/**
 * The form-action source that admits `uri`: its origin for http(s) (CSP matches scheme, host and
 * port), the bare scheme for a native app's private-use scheme (RFC 8252 §7.1: `com.example.app:`);
 * null for anything else, which is then left out (only registered redirect URIs get here).
 */
export function formActionSource(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.origin;
  return SCHEME.test(url.protocol) ? url.protocol : null;
}

/**
 * The Content-Security-Policy of every page: scripts and styles only from this origin (the pages'
 * one script, /assets/show-password.js, never inline: no `'unsafe-inline'`), images from here, as
 * data: URLs, and from the origins a page names (the account page's avatar); fetch() only to this
 * origin (the passkey scripts' JSON endpoints); forms only to this origin and, on the pages of an
 * app's authorization or logout request, to where that request returns (`sources.forms`); nothing
 * else. form-action keeps an injected form, or a changed action, from posting what a page holds.
 */
export function contentSecurityPolicy(sources: PageSources = {}): string {
  const images = ["'self'", 'data:', ...(sources.images ?? [])].join(' ');
  const forms = ["'self'"];
  for (const uri of sources.forms ?? []) {
    const source = formActionSource(uri);
    if (source !== null && !forms.includes(source)) forms.push(source);
  }
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src ${images}; connect-src 'self'; form-action ${forms.join(' ')}; base-uri 'none'; frame-ancestors 'none'`;
}

/** The page's image origins with the branding logo's (BRAND_LOGO_URL), when it is elsewhere. */
function withBrandOrigin(reply: FastifyReply, origins: readonly string[] = []): readonly string[] {
  const logoOrigin = reply.server.brand.logo?.origin;
  return logoOrigin && !origins.includes(logoOrigin) ? [...origins, logoOrigin] : origins;
}

/**
 * Headers of every page: never cached (they carry CSRF tokens and personal data), never framed
 * (clickjacking of the sign-in and consent buttons), the CSP above (with the branding logo's
 * origin on every page), and the page's language (which depends on Accept-Language and the
 * `lang` cookie).
 */
export function setPageHeaders(reply: FastifyReply, locale: Locale, sources: PageSources = {}): void {
  const policy = contentSecurityPolicy({ ...sources, images: withBrandOrigin(reply, sources.images) });
  reply
    .header('cache-control', 'no-store')
    .header('content-security-policy', policy)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-language', locale)
    .header('vary', 'Accept-Language, Cookie')
    .type('text/html; charset=utf-8');
}
