import { z } from 'zod';
import { safeReturnPath } from '../lib/return-to.js';

/** An OAuth authorization request id, as the authorize endpoint hands it to the sign-in page. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

/** Every field of the forms is bounded before any work on it (no field of ours comes near this). */
export const text = z.string().max(4096).optional();
/** Passwords are only compared, never transformed: a long one is answered as a wrong one, with no argon2 work on it. */
export const password = z.string().optional();

/** `request`: absent or empty (a hidden field left blank) means none; anything else must be an id. */
const requestIdField = z
  .union([
    z.literal(''),
    z.string().regex(REQUEST_ID_PATTERN, 'request must be an authorization request id (base64url, ≤ 100)'),
  ])
  .optional()
  .transform((value) => value || undefined);

/** Where to go after signing in: carried by the pages' query strings and hidden fields. */
export const flowFields = { request: requestIdField, return_to: text };

export const flowQuery = z.object(flowFields);

/** A form body; a POST without one is an empty form (and so fails the CSRF check, 403). */
export const formBody = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.preprocess((value) => value ?? {}, z.object(shape));

/** Where the browser goes once signed in, and what the pages carry along to get there. */
export interface Flow {
  requestId?: string;
  /** Only ever a safe same-origin path (safeReturnPath); unsafe values are dropped on arrival. */
  returnTo?: string;
}

export function flowFrom(input: { request?: string; return_to?: string }): Flow {
  return { requestId: input.request, returnTo: safeReturnPath(input.return_to) ?? undefined };
}

/** `?request=…&return_to=…` for the links between sign-in and sign-up (empty when there is nothing). */
export function flowQueryString(flow: Flow): string {
  const params = new URLSearchParams();
  if (flow.requestId) params.set('request', flow.requestId);
  if (flow.returnTo) params.set('return_to', flow.returnTo);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/**
 * After sign-in: back into the OAuth flow when an authorization request is waiting, else the safe
 * `return_to` path, else the account page.
 */
export function destination(flow: Flow): string {
  if (flow.requestId) return `/api/v1/oauth/authorize/resume?request=${encodeURIComponent(flow.requestId)}`;
  return flow.returnTo ?? '/account';
}

/** Echoed input is capped: the pages never grow with what a request sends. */
const ECHO_MAX_LENGTH = 256;
export const echo = (value: string | undefined) => (value ?? '').slice(0, ECHO_MAX_LENGTH);
