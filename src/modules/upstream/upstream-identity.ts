/* What a trip to a provider yields, shared by the provider clients (upstream-client, github-identity). */

/** What a provider proved about the person: the stable subject and what it said besides. */
export interface UpstreamIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** The provider's username or name, to show and to tell links apart. */
  label: string | null;
  suggestedUsername: string | null;
  /** The provider's own `amr` (RFC 8176), when it sent one. */
  amr: string[];
}

/** Why a trip to a provider failed, for the page that says what to do. */
export type UpstreamFailureReason = 'unreachable' | 'invalid_response' | 'misconfigured';

export class UpstreamFailure extends Error {
  constructor(
    readonly reason: UpstreamFailureReason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** A provider's answer to the browser: its error (the person cancelled, the app is refused). */
export interface ProviderRefusal {
  error: string;
  description: string | null;
}
