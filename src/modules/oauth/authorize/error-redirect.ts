import type { AuthorizeRedirectError } from './request.js';

/** The redirect back to the client with the given parameters, and `iss` (RFC 9207). */
export function redirectBack(
  redirectUri: string,
  issuer: string,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.append(name, value);
  url.searchParams.append('iss', issuer);
  return url.toString();
}

/** The error response of RFC 6749 §4.1.2.1 as a redirect to the client. */
export function errorRedirect(error: AuthorizeRedirectError, issuer: string): string {
  return redirectBack(error.redirectUri, issuer, {
    error: error.apiError.error,
    error_description: error.apiError.description,
    state: error.state,
  });
}
