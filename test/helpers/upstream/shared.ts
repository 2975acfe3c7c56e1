import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * What the three upstream stand-ins (oidc-standin.ts, github-standin.ts, apple-standin.ts) have in
 * common: they listen on 127.0.0.1 on a port of their own, answer without any page a person
 * would click, record what they were sent, and can be told to misbehave.
 */

/**
 * `garbage`: the token endpoint answers 200 with an HTML body, as a proxy or captive portal would.
 * `error`: the authorization endpoint sends the browser back with error=access_denied, as when the
 * person declines (RFC 6749 §4.1.2.1).
 */
export type Misbehaviour = 'garbage' | 'error';

/** One request a stand-in received: the query of a GET, the form (or JSON) body of a POST. */
export interface RecordedRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
}

/** What every stand-in's handle offers. */
export interface StandInHandle {
  /** Origin, e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly url: string;
  /** Every request received, oldest first; tests may empty it (`handle.requests.length = 0`). */
  readonly requests: RecordedRequest[];
  /** The account (key of `accounts`) the next authorizations approve; stays until changed. */
  nextAccount: string;
  misbehave(mode: Misbehaviour | null): void;
  /** Closes the port and every open connection: afterwards connecting is refused. */
  stop(): Promise<void>;
}

export const GARBAGE_BODY = '<html>oops</html>';

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function stopServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A form (application/x-www-form-urlencoded) or JSON object body as flat strings. */
export function parseBody(req: IncomingMessage, body: string): Record<string, string> {
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, String(value)]));
    } catch {
      return {};
    }
    return {};
  }
  return Object.fromEntries(new URLSearchParams(body));
}

/** Client credentials from an RFC 6749 §2.3.1 Basic header, else from the body. */
export function clientCredentials(
  req: IncomingMessage,
  params: Record<string, string>,
): { id: string | undefined; secret: string | undefined } {
  const header = req.headers.authorization ?? '';
  if (header.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0)
      return {
        id: decodeURIComponent(decoded.slice(0, colon)),
        secret: decodeURIComponent(decoded.slice(colon + 1)),
      };
  }
  return { id: params.client_id, secret: params.client_secret };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(html);
}

export function sendGarbage(res: ServerResponse): void {
  sendHtml(res, 200, GARBAGE_BODY);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location });
  res.end();
}

/** `base` with `params` added to its query. */
export function withQuery(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(key, value);
  return url.href;
}

/**
 * A redirect_uri is accepted when it is one of `registered`, or, when nothing is registered, when
 * it is any http URL on the loopback host: the service under test often learns its own port only
 * after the stand-in has started.
 */
export function redirectUriAllowed(uri: string | undefined, registered: readonly string[]): boolean {
  if (!uri) return false;
  if (registered.length > 0) return registered.includes(uri);
  const url = URL.parse(uri);
  return url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** RFC 7636 §4.6: with a challenge sent, the verifier must hash to it (S256 only). */
export function pkceMatches(challenge: string | undefined, verifier: string | undefined): boolean {
  if (challenge === undefined) return true;
  if (!verifier) return false;
  return createHash('sha256').update(verifier).digest('base64url') === challenge;
}

export function randomToken(prefix = ''): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`;
}

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

/** The form's action and hidden fields of a form_post answer (OAuth 2.0 Form Post Response Mode). */
export function formPostFields(html: string): { action: string; fields: Record<string, string> } {
  const decodeHtml = (text: string) =>
    text
      .replaceAll('&quot;', '"')
      .replaceAll('&#39;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&');
  const action = /<form\b[^>]*\baction="([^"]*)"/i.exec(html)?.[1];
  if (action === undefined) throw new Error('no form in the page');
  const fields: Record<string, string> = {};
  for (const [input] of html.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input)?.[1];
    if (name !== undefined)
      fields[decodeHtml(name)] = decodeHtml(/\bvalue="([^"]*)"/i.exec(input)?.[1] ?? '');
  }
  return { action: decodeHtml(action), fields };
}
