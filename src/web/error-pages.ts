import type { FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.js';
import type { ErrorPageKind } from './i18n/index.js';
import { flowFields, flowFrom, flowQueryString } from './page-forms.js';

/** An unregistered redirect_uri, as its error page shows it (docs/pages.md "Error pages"). */
export interface RedirectUriMismatch {
  /** What the request sent, cut to `RECEIVED_MAX_LENGTH`; the page escapes it as every value. */
  received: string;
  /** The hosts of the client's registered redirect URIs (a native app's scheme when it has no host). */
  registeredHosts: string[];
}

/** What an error page shows besides its kind's title and explanation. */
export interface ErrorPageOptions {
  /** The path (with its query) the language switch links to (see PageOptions). */
  switchBase?: string;
  /** A technical description (in English), shown under the explanation. */
  detail?: string;
  /** Seconds until a retry may succeed (429): the page says so. */
  retryAfterSeconds?: number;
  /** The way out, where it depends on the request (a 429's sign-in of its authorization request). */
  linkHref?: string;
  redirectUri?: RedirectUriMismatch;
}

/**
 * An error a page route throws to answer with a given error page: the one error handler renders it
 * (`renderBrowserError`), so no route renders error pages of its own. `cause`: the error the page
 * stands for (an authorize or logout request's), whose code the request's log line gives.
 */
export class PageError extends ApiError {
  constructor(
    status: number,
    readonly kind: ErrorPageKind,
    readonly options: ErrorPageOptions = {},
    cause?: ApiError,
  ) {
    super(status, kind, options.detail ?? kind, { cause });
  }
}

/** The way out an error page of a kind offers, besides the account page (its text: `t.errors[kind].link`). */
export const ERROR_PAGE_LINKS: Partial<Record<ErrorPageKind, string>> = {
  reset_link_invalid: '/password/forgot',
  not_found: '/',
  console_needs_second_factor: '/account/security',
};

/** What the error page says, by status (its texts are in src/web/i18n/). */
const PAGE_KINDS: Record<number, ErrorPageKind> = {
  400: 'bad_request',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'too_large',
  415: 'bad_request',
  429: 'rate_limited',
  503: 'unavailable',
};

export function errorPageOf(apiError: ApiError): { kind: ErrorPageKind; options: ErrorPageOptions } {
  if (apiError instanceof PageError) return { kind: apiError.kind, options: apiError.options };
  const kind = PAGE_KINDS[apiError.status] ?? (apiError.status >= 500 ? 'server_error' : 'bad_request');
  // A 500's description is a fixed sentence that the page already says, as is a 404's (it speaks
  // to API clients of the route catalogue); a 429's is the retry delay, which the page says in the
  // reader's language.
  if (kind === 'server_error' || kind === 'not_found') return { kind, options: {} };
  if (kind === 'rate_limited') {
    const seconds = Number(apiError.headers['retry-after']);
    return { kind, options: Number.isInteger(seconds) ? { retryAfterSeconds: seconds } : {} };
  }
  return { kind, options: { detail: apiError.description } };
}

const RECEIVED_MAX_LENGTH = 500;

/** The page's view of a redirect_uri that is none of the client's registered ones. */
export function redirectUriMismatch(received: string, registered: readonly string[]): RedirectUriMismatch {
  const hostOf = (uri: string) => {
    try {
      const url = new URL(uri);
      return url.host || url.protocol;
    } catch {
      return undefined;
    }
  };
  const hosts = registered.map(hostOf).filter((host) => host !== undefined);
  return {
    received: received.length > RECEIVED_MAX_LENGTH ? `${received.slice(0, RECEIVED_MAX_LENGTH)}…` : received,
    registeredHosts: [...new Set(hosts)],
  };
}

const AUTHORIZE_PATH = '/api/v1/oauth/authorize';
/** A sign-in form is a few hundred bytes; a refused request's body is read only when this small. */
const FORM_MAX_BYTES = 8 * 1024;
const FORM_WAIT_MS = 1000;

/**
 * The form a request sent, when the refusal came before its body was read (the rate limits answer
 * at onRequest): at most FORM_MAX_BYTES of `application/x-www-form-urlencoded` with a length,
 * within FORM_WAIT_MS; anything else is no form.
 */
function unreadForm(request: FastifyRequest): Promise<URLSearchParams | undefined> {
  const raw = request.raw;
  const length = Number(request.headers['content-length']);
  const type = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' || !(length > 0 && length <= FORM_MAX_BYTES))
    return Promise.resolve(undefined);
  if (raw.readableEnded || raw.readableFlowing !== null) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (form: URLSearchParams | undefined) => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(form);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > FORM_MAX_BYTES) return done(undefined);
      chunks.push(chunk);
    };
    const onEnd = () => done(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const onError = () => done(undefined);
    const timer = setTimeout(() => done(undefined), FORM_WAIT_MS);
    raw.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * Where a 429 page in an OAuth flow leads back to (docs/pages.md "Error pages"): the sign-in of
 * the authorization request the refused page or form belonged to (its `request`, from the query
 * or the form), or, for the authorization endpoint itself, the same request again. Undefined
 * outside a flow.
 */
export async function rateLimitedLink(request: FastifyRequest): Promise<string | undefined> {
  const search = request.url.indexOf('?');
  const path = search < 0 ? request.url : request.url.slice(0, search);
  const query = new URLSearchParams(search < 0 ? '' : request.url.slice(search + 1));
  if (request.method === 'GET' && path === AUTHORIZE_PATH && query.has('client_id')) return request.url;
  const parsed = request.body && typeof request.body === 'object' ? request.body : undefined;
  const sent = query.get('request') ?? (parsed as { request?: unknown } | undefined)?.request;
  const form = sent === undefined && request.method === 'POST' ? await unreadForm(request) : undefined;
  const fields = flowFields.request.safeParse(sent ?? form?.get('request') ?? undefined);
  const requestId = fields.success ? fields.data : undefined;
  return requestId ? `/signin${flowQueryString(flowFrom({ request: requestId }))}` : undefined;
}
