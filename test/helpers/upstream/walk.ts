import { importPKCS8, SignJWT } from 'jose';
import * as client from 'openid-client';
import { formPostFields } from './shared.js';

/*
 * Driving a stand-in from Node as a browser would, with openid-client 6 as the relying party:
 * the redirect (or Apple's form post) the authorization endpoint answers with is followed by
 * hand, without a browser.
 */

export const DEFAULT_CALLBACK = 'http://127.0.0.1:9/upstream/callback';

/** One trip's PKCE verifier and challenge (RFC 7636), state and nonce. */
export interface FlowChecks {
  pkceCodeVerifier: string;
  challenge: string;
  expectedState: string;
  expectedNonce: string;
}

export async function newChecks(): Promise<FlowChecks> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  return {
    pkceCodeVerifier,
    challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    expectedState: client.randomState(),
    expectedNonce: client.randomNonce(),
  };
}

/** openid-client's configuration from the stand-in's discovery, plain http allowed. */
export function discover(
  url: string,
  clientId: string,
  auth: client.ClientAuth,
): Promise<client.Configuration> {
  return client.discovery(new URL(url), clientId, undefined, auth, {
    execute: [client.allowInsecureRequests],
  });
}

/** GitHub has no discovery: its endpoints, as the service configures them. */
export function githubConfiguration(
  url: string,
  clientId: string,
  clientSecret: string,
): client.Configuration {
  const config = new client.Configuration(
    {
      issuer: url,
      authorization_endpoint: `${url}/login/oauth/authorize`,
      token_endpoint: `${url}/login/oauth/access_token`,
    },
    clientId,
    undefined,
    client.ClientSecretPost(clientSecret),
  );
  client.allowInsecureRequests(config);
  return config;
}

/** The authorization URL with PKCE S256 and state, and nonce unless `nonce: false` (GitHub). */
export function authorizationUrl(
  config: client.Configuration,
  checks: FlowChecks,
  options: { scope: string; nonce?: boolean; redirectUri?: string; extra?: Record<string, string> },
): URL {
  return client.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri ?? DEFAULT_CALLBACK,
    scope: options.scope,
    state: checks.expectedState,
    code_challenge: checks.challenge,
    code_challenge_method: 'S256',
    ...(options.nonce === false ? {} : { nonce: checks.expectedNonce }),
    ...options.extra,
  });
}

/** Where the authorization endpoint redirects to; throws with its answer when it does not. */
export async function followRedirect(url: URL): Promise<URL> {
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (answer.status < 300 || answer.status >= 400 || !location)
    throw new Error(`no redirect but ${answer.status}: ${await answer.text()}`);
  return new URL(location, url);
}

/**
 * Apple's form_post page read: its fields, and the POST to redirect_uri a browser would make
 * (a Request openid-client's authorizationCodeGrant takes as the current URL).
 */
export async function followFormPost(
  url: URL,
): Promise<{ html: string; fields: Record<string, string>; request: Request }> {
  const answer = await fetch(url, { redirect: 'manual' });
  const html = await answer.text();
  if (answer.status !== 200) throw new Error(`no form post but ${answer.status}: ${html}`);
  const { action, fields } = formPostFields(html);
  const request = new Request(action, { method: 'POST', body: new URLSearchParams(fields) });
  return { html, fields, request };
}

/**
 * Apple's client secret as its "Creating a client secret" describes it: ES256 with the
 * operator's key, kid, iss = team, sub = Services ID, aud = issuer. `changes` spoil it for tests.
 */
export async function appleClientSecret(
  apple: { url: string; clientId: string; teamId: string; keyId: string; privateKeyPem: string },
  changes: { kid?: string; lifetimeSeconds?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: changes.kid ?? apple.keyId })
    .setIssuer(apple.teamId)
    .setSubject(apple.clientId)
    .setAudience(apple.url)
    .setIssuedAt(now)
    .setExpirationTime(now + (changes.lifetimeSeconds ?? 300))
    .sign(await importPKCS8(apple.privateKeyPem, 'ES256'));
}
