import type { ApiError } from '../../../lib/errors.js';
import type { Client } from '../../clients/client.js';
import type { Scope } from '../scopes.js';

export type Prompt = 'none' | 'login' | 'consent';

/** An authorize request that passed every check. */
export interface AuthorizationRequest {
  client: Client;
  redirectUri: string;
  scopes: Scope[];
  state: string;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: Set<Prompt>;
  /** OIDC Core §3.1.2.1: the longest time since the user last signed in, in seconds; null for any. */
  maxAge: number | null;
  /** `acr_values` named `mfa`: the user must have used a second factor. */
  requireMfa: boolean;
}

/**
 * An error to send back to the client's redirect_uri (RFC 6749 §4.1.2.1, RFC 9207), once the
 * client and its redirect_uri are known to be genuine.
 */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly apiError: ApiError,
    readonly redirectUri: string,
    readonly state: string | undefined,
  ) {
    super(apiError.description);
  }
}
