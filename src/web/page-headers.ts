import type { FastifyReply } from 'fastify';
import type { Locale } from './i18n/index.js';

/**
 * The Content-Security-Policy of every page: scripts and styles only from this origin (the pages'
 * one script, /assets/show-password.js, never inline: no `'unsafe-inline'`), images from here, as
 * data: URLs, and from the origins a page names (the account page's avatar); fetch() only to this
 * origin (the passkey scripts' JSON endpoints); nothing else.
 * No `form-action`: browsers apply it to the redirect that follows the consent form, which goes to
 * the client's redirect_uri.
 */
export function contentSecurityPolicy(imageOrigins: readonly string[] = []): string {
  const images = ["'self'", 'data:', ...imageOrigins].join(' ');
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src ${images}; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

/**
 * Headers of every page: never cached (they carry CSRF tokens and personal data), never framed
 * (clickjacking of the sign-in and consent buttons), the CSP above, and the page's language (which
 * depends on Accept-Language and the `lang` cookie).
 */
export function setPageHeaders(reply: FastifyReply, locale: Locale, imageOrigins?: readonly string[]): void {
  reply
    .header('cache-control', 'no-store')
    .header('content-security-policy', contentSecurityPolicy(imageOrigins))
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-language', locale)
    .header('vary', 'Accept-Language, Cookie')
    .type('text/html; charset=utf-8');
}
