import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { pageScript, stylesheet } from './assets/stylesheet.js';
import { ERROR_PAGE_LINKS, type ErrorPageOptions, errorPageOf, rateLimitedLink } from './error-pages.js';
import {
  type ErrorPageKind,
  formatDate,
  isLocale,
  LOCALE_COOKIE,
  LOCALE_PARAM,
  LOCALES,
  type Locale,
  type Messages,
  messages,
  negotiateLocale,
  type PluralForms,
  plural,
} from './i18n/index.js';
import { setPageHeaders } from './page-headers.js';

export { type ErrorPageOptions, PageError } from './error-pages.js';

/**
 * Server-rendered pages (views/*.ejs), wrapped in views/layout.ejs. Templates escape every value
 * with `<%= %>`; only the layout's `body`, our own rendered template, is inserted raw. Each gets
 * `t` (the texts of the page's locale), `locale`, `plural(forms, count)` and `date(value)`. Every
 * page has a title in every language, so the templates are the titles' keys (and the English-only
 * reference).
 */
export type PageTemplate =
  | keyof Messages['titles']
  | 'reference'
  | `console/${string}`
  | `developers/${string}`;

/** Pages in English only, whatever the reader's language (the API reference is technical). */
const ENGLISH_ONLY: ReadonlySet<PageTemplate> = new Set(['reference']);

const REFERENCE_TITLE = 'API reference';

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the service's cookies are Secure: PUBLIC_URL is https. */
    secureCookies: boolean;
  }
}

/** A year: the language choice outlives sessions. */
const LOCALE_COOKIE_MAX_AGE = 365 * 24 * 3600;

/**
 * The language each request's page settled on, so that one request negotiates once, and a `?lang=`
 * choice not yet written to the cookie (a route may read the language before its page has a reply).
 */
const settled = new WeakMap<FastifyRequest, { locale: Locale; remember?: Locale }>();

/**
 * The page language of a request (`?lang=`, the `lang` cookie, `Accept-Language`, English). A
 * valid `?lang=` is remembered in the `lang` cookie: `en` or `ru` only, SameSite=Lax, Path=/,
 * set on the first call with the reply, whatever read the language before.
 */
export function pageLocale(request: FastifyRequest, reply?: FastifyReply): Locale {
  let known = settled.get(request);
  if (!known) {
    // From the URL itself: a route's query schema may have dropped the parameter from request.query.
    const search = request.url.indexOf('?');
    known = negotiateLocale({
      query: search < 0 ? undefined : new URLSearchParams(request.url.slice(search + 1)).get(LOCALE_PARAM),
      cookie: request.cookies?.[LOCALE_COOKIE],
      acceptLanguage: request.headers['accept-language'],
    });
    settled.set(request, known);
  }
  if (known.remember && reply) {
    reply.setCookie(LOCALE_COOKIE, known.remember, {
      path: '/',
      sameSite: 'lax',
      httpOnly: true,
      // Secure as the session and CSRF cookies: when PUBLIC_URL is https (see app.ts).
      secure: request.server.secureCookies,
      maxAge: LOCALE_COOKIE_MAX_AGE,
    });
    known.remember = undefined;
  }
  return known.locale;
}

/**
 * Makes `preferred` the page language of this request unless the page's own switch (`?lang=`)
 * chose one: a site's `ui_locales` (OIDC RP-Initiated Logout 1.0 §2) comes before the `lang`
 * cookie and `Accept-Language`. Call it before rendering; undefined changes nothing.
 */
export function preferPageLocale(request: FastifyRequest, preferred: Locale | undefined): void {
  if (!preferred || settled.has(request)) return;
  const search = request.url.indexOf('?');
  const query = search < 0 ? null : new URLSearchParams(request.url.slice(search + 1)).get(LOCALE_PARAM);
  if (!isLocale(query)) settled.set(request, { locale: preferred });
}

/** `path` (a same-origin path with its query) with `lang=<locale>` set, other parameters kept. */
export function withLocale(path: string, locale: Locale): string {
  const url = new URL(path, 'http://page.invalid');
  url.searchParams.set(LOCALE_PARAM, locale);
  // Always a path of this site: never `//host…`, which a browser would read as another site.
  return `${url.pathname.replace(/^\/+/, '/')}${url.search}`;
}

function switchBase(request: FastifyRequest, base: string | undefined): string {
  if (base) return base;
  const declared = request.routeOptions.config?.switchBase?.(request);
  if (declared) return declared;
  if (request.method === 'GET' || request.method === 'HEAD') return request.url;
  return '/account';
}

/** Options of a page beyond its template's data. */
export interface PageOptions {
  /**
   * The path (with its query) the language switch links to, with `lang` added. Default: the
   * page's own URL for a GET, and for a POST the form it came from (or the account page).
   */
  switchBase?: string;
  /** Origins the page shows images from besides its own (the CSP's img-src): a user's avatar host. */
  imageOrigins?: readonly string[];
  /** Redirect URIs its forms may end at (the CSP's form-action): its app request's redirect_uri. */
  formTargets?: readonly string[];
  /**
   * A template that frames the page's own inside `<main>` (the console's navigation), given the
   * page's data and the rendered page as `content`.
   */
  frame?: string;
  /** Stylesheets of this origin the page adds after the pages' own (the console's). */
  stylesheets?: readonly string[];
}

interface Rendering {
  locale: Locale;
  t: Messages;
  switchLinks: Array<{ locale: Locale; name: string; href: string; current: boolean }>;
}

function prepare(reply: FastifyReply, template: PageTemplate, options: PageOptions): Rendering {
  const request = reply.request;
  if (ENGLISH_ONLY.has(template)) return { locale: 'en', t: messages('en'), switchLinks: [] };
  const locale = pageLocale(request, reply);
  const base = switchBase(request, options.switchBase);
  return {
    locale,
    t: messages(locale),
    switchLinks: LOCALES.map((each) => ({
      locale: each,
      name: messages(each).languageName,
      href: withLocale(base, each),
      current: each === locale,
    })),
  };
}

async function render(
  reply: FastifyReply,
  template: PageTemplate,
  data: Record<string, unknown>,
  rendering: Rendering,
  options: Pick<PageOptions, 'frame' | 'stylesheets'> = {},
) {
  const { locale, t } = rendering;
  const { brand } = reply.server;
  const helpers = {
    locale,
    t,
    serviceName: brand.name,
    plural: (forms: PluralForms, count: number) => plural(locale, forms, count),
    date: (value: Date | string) => formatDate(locale, new Date(value)),
  };
  const page = await reply.viewAsync(template, { ...data, ...helpers });
  const body = options.frame
    ? await reply.viewAsync(options.frame, { ...data, ...helpers, content: page })
    : page;
  const title =
    typeof data.title === 'string' && data.title
      ? data.title
      : template === 'reference'
        ? REFERENCE_TITLE
        : template.includes('/')
          ? ''
          : t.titles[template as keyof Messages['titles']];
  return reply.viewAsync('layout', {
    ...helpers,
    title,
    template,
    brandLogo: brand.logo?.src ?? null,
    stylesheetHref: stylesheet().href,
    brandStylesheetHref: brand.stylesheet?.href ?? null,
    stylesheets: options.stylesheets ?? [],
    scriptHref: pageScript().href,
    switchLinks: rendering.switchLinks,
    body,
  });
}

/**
 * Renders views/<template>.ejs inside the layout with the status already set on the reply
 * (`renderPage(reply.code(401), 'signin', …)`), in the request's language. Return its result from
 * the handler: the page is sent asynchronously.
 */
export function renderPage(
  reply: FastifyReply,
  template: PageTemplate,
  data: Record<string, unknown>,
  options: PageOptions = {},
): FastifyReply {
  const rendering = prepare(reply, template, options);
  setPageHeaders(reply, rendering.locale, { images: options.imageOrigins, forms: options.formTargets });
  render(reply, template, data, rendering, options).then(
    (html) => reply.send(html),
    (error: unknown) => reply.send(error),
  );
  return reply;
}

/**
 * Renders an HTML error page (never a redirect) in the reader's language: the title and
 * explanation of `kind`, and the technical `detail` when given. Return it from the handler.
 */
export function renderErrorPage(
  reply: FastifyReply,
  status: number,
  kind: ErrorPageKind,
  options: ErrorPageOptions = {},
): FastifyReply {
  reply.code(status);
  const rendering = prepare(reply, 'error', options);
  setPageHeaders(reply, rendering.locale);
  const { t, locale } = rendering;
  const { title, message } = t.errors[kind];
  const retry =
    options.retryAfterSeconds !== undefined && options.retryAfterSeconds > 0
      ? plural(locale, t.errors.retryIn, options.retryAfterSeconds)
      : undefined;
  const href = options.linkHref ?? ERROR_PAGE_LINKS[kind];
  const link = href && t.errors[kind].link ? { href, text: t.errors[kind].link } : undefined;
  const { detail, redirectUri } = options;
  render(
    reply,
    'error',
    { title, message, retry, link, detail, redirectUri, status, requestId: reply.request.id },
    rendering,
  ).then(
    (html) => reply.send(html),
    (error: unknown) => {
      // The error page must not fail in turn: a plain page, and the cause in the log.
      reply.log.error({ err: error }, 'the error page could not be rendered');
      reply.send(
        `<!doctype html><html lang="${locale}"><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
          `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></html>`,
      );
    },
  );
  return reply;
}

/**
 * The error handler's answer on browser routes: the error page of the error's kind and status. A
 * 429 in an OAuth flow links back to the sign-in of its authorization request, which may be in a
 * form not read yet: the page waits for it (error-pages.ts `rateLimitedLink`).
 */
export function renderBrowserError(reply: FastifyReply, apiError: ApiError): FastifyReply {
  const { kind, options } = errorPageOf(apiError);
  if (kind !== 'rate_limited') return renderErrorPage(reply, apiError.status, kind, options);
  rateLimitedLink(reply.request).then(
    (linkHref) => renderErrorPage(reply, apiError.status, kind, { ...options, linkHref }),
    () => renderErrorPage(reply, apiError.status, kind, options),
  );
  return reply;
}
