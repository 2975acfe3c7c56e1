import { importPKCS8, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import type { Context } from '../../context.js';
import { isLoopbackHost } from '../../lib/redirect-uri.js';
import { githubIdentity } from './github-identity.js';
import type { UpstreamProvider } from './providers.repository.js';
import { applePrivateKeyOf, callbackUrl, clientSecretOf } from './providers.service.js';
import { UpstreamFailure, type UpstreamIdentity } from './upstream-identity.js';

/*
 * The provider side of upstream sign-in, through openid-client (a maintained, certified OpenID
 * client): state, nonce and PKCE towards the provider, the id_token's signature, `iss`, `aud`,
 * `exp` and `nonce` checked, and RFC 9207's `iss` response parameter checked whenever the provider
 * says it sends one (a mix-up attack then fails). GitHub is plain OAuth 2.0: its profile comes
 * from its REST API with the access token.
 */

/** Seconds to wait for a provider before telling the person it is unreachable. */
const TIMEOUT_SECONDS = 10;
/** After a failed discovery, pages do not wait for the provider again before this long. */
const DISCOVERY_RETRY_MS = 60 * 1000;
const failedDiscoveries = new Map<string, number>();
/** Discovery documents are kept this long, so a sign-in costs no extra round trip. */
const METADATA_TTL_MS = 60 * 60 * 1000;
const metadataCache = new Map<
  string,
  {
    at: number;
    metadata: Promise<oidc.ServerMetadata>;
    /** The metadata once discovery answered. */
    settled?: oidc.ServerMetadata;
    jwks?: oidc.ExportedJWKSCache;
  }
>();

/** Apple's client secret: an ES256 JWT signed with the operator's key (Apple's "Creating a client secret"). */
async function appleClientSecret(ctx: Context, provider: UpstreamProvider): Promise<string> {
  const pem = applePrivateKeyOf(ctx, provider);
  if (!pem || !provider.appleKeyId || !provider.appleTeamId)
    throw new UpstreamFailure(
      'misconfigured',
      'the Apple private key cannot be opened (COOKIE_SECRET changed?)',
    );
  const key = await importPKCS8(pem, 'ES256');
  const now = Math.floor(ctx.clock.now().getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: provider.appleKeyId })
    .setIssuer(provider.appleTeamId)
    .setSubject(provider.clientId)
    .setAudience(provider.issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(key);
}

async function clientAuthentication(ctx: Context, provider: UpstreamProvider): Promise<oidc.ClientAuth> {
  if (provider.kind === 'apple') return oidc.ClientSecretPost(await appleClientSecret(ctx, provider));
  const secret = clientSecretOf(ctx, provider);
  if (secret === null)
    throw new UpstreamFailure('misconfigured', 'the client secret cannot be opened (COOKIE_SECRET changed?)');
  return provider.kind === 'github' ? oidc.ClientSecretPost(secret) : oidc.ClientSecretBasic(secret);
}

async function serverMetadata(provider: UpstreamProvider, now: number): Promise<oidc.ServerMetadata> {
  if (provider.kind === 'github')
    return {
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer.replace(/\/+$/, '')}/login/oauth/authorize`,
      token_endpoint: `${provider.issuer.replace(/\/+$/, '')}/login/oauth/access_token`,
    };
  const cached = metadataCache.get(provider.issuer);
  if (cached && now - cached.at < METADATA_TTL_MS) return cached.metadata;
  // One discovery at a time per issuer: the requests that arrive meanwhile wait for it.
  const metadata = oidc
    .discovery(new URL(provider.issuer), provider.clientId, undefined, undefined, {
      timeout: TIMEOUT_SECONDS,
      execute: insecureAllowed(provider) ? [oidc.allowInsecureRequests] : [],
    })
    .then((discovered) => {
      const found = discovered.serverMetadata();
      const entry = metadataCache.get(provider.issuer);
      if (entry?.metadata === metadata) entry.settled = found;
      return found;
    });
  metadataCache.set(provider.issuer, { at: now, metadata });
  metadata.catch(() => {
    if (metadataCache.get(provider.issuer)?.metadata === metadata) metadataCache.delete(provider.issuer);
    failedDiscoveries.set(provider.issuer, now);
  });
  return metadata;
}

/**
 * Discovers the provider's endpoints now, waiting at most `waitMs`: a page with its button asks
 * first, so that its CSP's form-action can admit an authorization endpoint on another origin than
 * the issuer's (authorizationOrigins) from the first click on.
 */
export async function discoverSoon(provider: UpstreamProvider, now: number, waitMs: number): Promise<void> {
  if (provider.kind === 'github') return;
  // A provider that is down does not slow every page: pages ask again a minute later.
  const failed = failedDiscoveries.get(provider.issuer);
  if (failed !== undefined && now - failed < DISCOVERY_RETRY_MS) return;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  await Promise.race([
    serverMetadata(provider, now).then(
      () => undefined,
      () => undefined,
    ),
    waited,
  ]);
  clearTimeout(timer);
}

function insecureAllowed(provider: UpstreamProvider): boolean {
  const url = new URL(provider.issuer);
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** The provider's configuration for one request, its client authentication made for it. */
async function configurationOf(ctx: Context, provider: UpstreamProvider): Promise<oidc.Configuration> {
  try {
    const metadata = await serverMetadata(provider, ctx.clock.now().getTime());
    const config = new oidc.Configuration(
      metadata,
      provider.clientId,
      undefined,
      await clientAuthentication(ctx, provider),
    );
    config.timeout = TIMEOUT_SECONDS;
    if (insecureAllowed(provider)) oidc.allowInsecureRequests(config);
    // The provider's keys, fetched once per issuer and kept with its metadata.
    const jwks = metadataCache.get(provider.issuer)?.jwks;
    if (jwks) oidc.setJwksCache(config, jwks);
    return config;
  } catch (error) {
    throw asFailure(error);
  }
}

function asFailure(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  // The provider refused the exchange in its own words (RFC 6749 §5.2): keep them for operators.
  if (error instanceof oidc.ResponseBodyError)
    return new UpstreamFailure(
      'invalid_response',
      `${error.error}${error.error_description ? `: ${error.error_description}` : ''} (HTTP ${error.status})`,
    );
  // The same refusal in a WWW-Authenticate challenge (RFC 6750 §3: a client_secret_basic refused).
  if (error instanceof oidc.WWWAuthenticateChallengeError) {
    const challenge = error.cause[0];
    const said = challenge?.parameters.error ?? challenge?.scheme ?? 'refused';
    const why = challenge?.parameters.error_description;
    return new UpstreamFailure('invalid_response', `${said}${why ? `: ${why}` : ''} (HTTP ${error.status})`);
  }
  const text = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
  const unreachable =
    error instanceof TypeError ||
    (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) ||
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|fetch failed|aborted/i.test(`${text} ${cause}`);
  return new UpstreamFailure(
    unreachable ? 'unreachable' : 'invalid_response',
    `${text}${cause ? ` (${cause})` : ''}`,
  );
}

/**
 * Where the browser is sent to sign in at the provider, as origins: a page's CSP form-action must
 * admit them, since a form posted to us is answered with a redirect there. The issuer's origin,
 * and the authorization endpoint's once discovery told it.
 */
export function authorizationOrigins(provider: UpstreamProvider): string[] {
  const origins = new Set([new URL(provider.issuer).origin]);
  const endpoint = metadataCache.get(provider.issuer)?.settled?.authorization_endpoint;
  if (endpoint) origins.add(new URL(endpoint).origin);
  return [...origins];
}

const isOpenId = (provider: UpstreamProvider) => provider.kind !== 'github';

/** The URL to send the browser to, with this trip's state, nonce and PKCE challenge (RFC 7636). */
export async function authorizationUrl(
  ctx: Context,
  provider: UpstreamProvider,
  checks: { state: string; nonce: string; codeVerifier: string; fresh?: boolean },
): Promise<string> {
  const config = await configurationOf(ctx, provider);
  const parameters: Record<string, string> = {
    redirect_uri: callbackUrl(ctx, provider.name),
    scope: provider.scopes,
    state: checks.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (isOpenId(provider)) parameters.nonce = checks.nonce;
  // Apple sends the name and address only to a form_post answer (its web sign-in documentation).
  if (provider.kind === 'apple') parameters.response_mode = 'form_post';
  // A re-authentication asks a generic OpenID provider for a new sign-in, not its session's
  // (OpenID Connect Core §3.1.2.1). Google and Apple document no `prompt=login`; they are not sent it.
  if (checks.fresh && provider.kind === 'oidc') parameters.prompt = 'login';
  return oidc.buildAuthorizationUrl(config, parameters).href;
}

/**
 * The identity the provider proved, from its answer at the callback (`callback` holds its
 * parameters), once the code is exchanged and every check passed.
 * @throws UpstreamFailure
 */
export async function finishAtProvider(
  ctx: Context,
  provider: UpstreamProvider,
  callback: URL,
  checks: { state: string; nonce: string; codeVerifier: string; appleUser?: string },
): Promise<UpstreamIdentity> {
  const config = await configurationOf(ctx, provider);
  try {
    // openid-client compares the URL's path with redirect_uri's; the answer arrived at that URL.
    const current = new URL(callbackUrl(ctx, provider.name));
    for (const [key, value] of callback.searchParams)
      if (key !== 'user') current.searchParams.append(key, value);
    const tokens = await oidc.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: isOpenId(provider) ? checks.nonce : undefined,
      idTokenExpected: isOpenId(provider),
    });
    if (provider.kind === 'github') return await githubIdentity(config, provider, tokens.access_token);
    const jwks = oidc.getJwksCache(config);
    const cached = metadataCache.get(provider.issuer);
    if (jwks && cached) cached.jwks = jwks;
    const claims = tokens.claims();
    if (!claims) throw new UpstreamFailure('invalid_response', 'no id_token');
    return openIdIdentity(claims, checks.appleUser);
  } catch (error) {
    throw asFailure(error);
  }
}

function openIdIdentity(claims: oidc.IDToken, appleUser: string | undefined): UpstreamIdentity {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  const email = text(claims.email);
  // Apple sends `email_verified` as the string "true".
  const emailVerified = claims.email_verified === true || claims.email_verified === 'true';
  const name = text(claims.name) ?? appleName(appleUser);
  const preferred = text(claims.preferred_username) ?? text(claims.nickname);
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email,
    emailVerified: email !== null && emailVerified,
    label: preferred ?? name ?? email,
    suggestedUsername: preferred ?? name ?? email?.split('@')[0] ?? null,
    amr: Array.isArray(claims.amr)
      ? claims.amr.filter((each): each is string => typeof each === 'string')
      : [],
  };
}

/** The name in Apple's `user` form field, which Apple sends on the first sign-in only. */
function appleName(user: string | undefined): string | null {
  if (!user || user.length > 2000) return null;
  try {
    const parsed = JSON.parse(user) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [parsed.name?.firstName, parsed.name?.lastName].filter(
      (part): part is string => typeof part === 'string' && part.trim() !== '',
    );
    return parts.length > 0 ? parts.join(' ').slice(0, 100) : null;
  } catch {
    return null;
  }
}
