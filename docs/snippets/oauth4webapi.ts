/**
 * A security-minded site (a bank, a game with a real-money wallet) with oauth4webapi v3: the
 * sign-in request is pushed first (PAR, RFC 9126) so nothing of it travels through the browser,
 * the tokens are bound to a key that never leaves the backend (DPoP, RFC 9449), a stolen access or
 * refresh token is useless without that key, and the provider signs the site out when the user
 * signs out there (back-channel logout) or the site signs the user out at the provider
 * (RP-initiated logout).
 * npm install express@5 oauth4webapi@3 jose@6
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';

export interface SiteOptions {
  /** The provider's issuer (its PUBLIC_URL), e.g. https://id.example. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registered with `--redirect-uri`, e.g. https://mysite.example/callback. */
  redirectUri: string;
  /** Registered with `--post-logout-redirect-uri`, e.g. https://mysite.example/signed-out. */
  postLogoutRedirectUri: string;
  /** The client's `--id-token-alg` (RS256 unless registered otherwise). */
  idTokenAlg?: 'RS256' | 'ES256' | 'EdDSA';
  /** Default: openid profile email wallet offline_access. */
  scope?: string;
  /** Only for a provider on plain http://localhost during development. */
  allowInsecureRequests?: boolean;
}

/** What the site remembers of a signed-in user (in memory here: use a shared store in production). */
interface SiteSession {
  sub: string;
  /** The provider's session (`sid` of the id_token): back-channel logout names it. */
  sid: string | undefined;
  idToken: string;
  accessToken: string;
  refreshToken: string | undefined;
}

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const COOKIE = 'site_session';

function cookieOf(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === COOKIE) return value;
  }
  return undefined;
}

/**
 * The provider asks for a fresh server nonce (`use_dpop_nonce`, RFC 9449 §8) on a key's first
 * proof and now and then after; the DPoP handle keeps the nonce it was given, so one retry does.
 */
async function withDPoPNonce<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (oauth.isDPoPNonceError(error)) return attempt();
    throw error;
  }
}

export async function createSite(options: SiteOptions) {
  const insecure = { [oauth.allowInsecureRequests]: options.allowInsecureRequests === true };
  const issuer = new URL(options.issuer);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
  );
  const client: oauth.Client = {
    client_id: options.clientId,
    id_token_signed_response_alg: options.idTokenAlg ?? 'RS256',
  };
  const clientAuth = oauth.ClientSecretBasic(options.clientSecret);
  // One key pair for the backend: every token the provider issues to this site is bound to it.
  // Keep it non-extractable; a new key pair after a restart only means signing in again.
  const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  const jwks = createRemoteJWKSet(new URL(as.jwks_uri as string));

  const sessions = new Map<string, SiteSession>();
  const pending = new Map<string, { codeVerifier: string; nonce: string }>();
  const logoutStates = new Set<string>();
  const sessionOf = (req: express.Request) => {
    const id = cookieOf(req.headers.cookie);
    return id === undefined ? undefined : sessions.get(id);
  };

  const app = express();
  app.use(express.urlencoded({ extended: false }));

  app.get('/login', async (_req, res, next) => {
    try {
      res.redirect(await startSignIn());
    } catch (error) {
      next(error);
    }
  });

  /** Pushes the sign-in request (RFC 9126) and answers where to send the browser. */
  async function startSignIn(): Promise<string> {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    pending.set(state, { codeVerifier, nonce });
    // RFC 9126: the parameters go to the provider over the back channel, authenticated; the
    // browser carries only an opaque request_uri that works once, for a minute.
    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(
        as,
        client,
        clientAuth,
        {
          response_type: 'code',
          redirect_uri: options.redirectUri,
          scope: options.scope ?? 'openid profile email wallet offline_access',
          code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        },
        insecure,
      ),
    );
    const url = new URL(as.authorization_endpoint as string);
    url.searchParams.set('client_id', options.clientId);
    url.searchParams.set('request_uri', pushed.request_uri);
    return url.href;
  }

  app.get('/callback', async (req, res) => {
    const current = new URL(req.originalUrl, options.redirectUri);
    const state = current.searchParams.get('state') ?? '';
    const started = pending.get(state);
    pending.delete(state);
    if (!started) {
      res.status(400).send('No sign-in is in progress. <a href="/login">Sign in</a>');
      return;
    }
    try {
      // Checks state and iss (RFC 9207), then exchanges the code with the PKCE verifier and a
      // DPoP proof, and checks the id_token (signature, iss, aud, exp, nonce).
      const params = oauth.validateAuthResponse(as, client, current, state);
      const tokens = await withDPoPNonce(async () =>
        oauth.processAuthorizationCodeResponse(
          as,
          client,
          await oauth.authorizationCodeGrantRequest(
            as,
            client,
            clientAuth,
            params,
            options.redirectUri,
            started.codeVerifier,
            { DPoP: dpop, ...insecure },
          ),
          { expectedNonce: started.nonce, requireIdToken: true },
        ),
      );
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      if (!claims || tokens.token_type !== 'dpop')
        throw new Error('expected DPoP-bound tokens and an id_token');
      const id = randomBytes(32).toString('base64url');
      sessions.set(id, {
        sub: claims.sub,
        sid: typeof claims.sid === 'string' ? claims.sid : undefined,
        idToken: tokens.id_token as string,
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
      });
      res.setHeader('set-cookie', `${COOKIE}=${id}; HttpOnly; SameSite=Lax; Path=/`);
      res.redirect('/');
    } catch (error) {
      // The user clicked Deny (access_denied), the request_uri expired, the state did not match, …
      res.status(400).send(`Sign-in failed (${(error as Error).message}). <a href="/login">Try again</a>`);
    }
  });

  app.get('/', async (req, res) => {
    const session = sessionOf(req);
    if (!session) {
      res.status(401).json({ signed_in: false });
      return;
    }
    // A DPoP-bound token goes out only as `Authorization: DPoP …` with a fresh proof (RFC 9449 §7).
    const profile = await withDPoPNonce(async () =>
      oauth.processUserInfoResponse(
        as,
        client,
        session.sub,
        await oauth.userInfoRequest(as, client, session.accessToken, { DPoP: dpop, ...insecure }),
      ),
    );
    res.json({ signed_in: true, sub: session.sub, username: profile.preferred_username });
  });

  app.post('/buy', async (req, res) => {
    const session = sessionOf(req);
    if (!session) {
      res.status(401).json({ signed_in: false });
      return;
    }
    const response = await withDPoPNonce(() =>
      oauth.protectedResourceRequest(
        session.accessToken,
        'POST',
        new URL('/api/v1/wallet/charge', as.issuer),
        new Headers({ 'content-type': 'application/json' }),
        JSON.stringify({
          amount: Number(req.body.amount),
          currency: 'COIN',
          description: String(req.body.item),
          // One key per purchase: a retried request never charges twice.
          idempotency_key: String(req.body.order_id),
        }),
        { DPoP: dpop, ...insecure },
      ),
    );
    res.status(response.status).json(await response.json());
  });

  app.post('/refresh', async (req, res) => {
    const session = sessionOf(req);
    if (!session?.refreshToken) {
      res.status(401).json({ signed_in: false });
      return;
    }
    const refreshToken = session.refreshToken;
    // The new tokens are bound to the same key; the refresh token is rotated.
    const tokens = await withDPoPNonce(async () =>
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, {
          DPoP: dpop,
          ...insecure,
        }),
      ),
    );
    session.accessToken = tokens.access_token;
    session.refreshToken = tokens.refresh_token ?? session.refreshToken;
    res.json({ refreshed: true, token_type: tokens.token_type });
  });

  // RP-initiated logout: the site forgets the user, then asks the provider to end its session
  // too; the id_token_hint lets the provider skip its confirmation page.
  app.get('/logout', (req, res) => {
    const id = cookieOf(req.headers.cookie);
    const session = id === undefined ? undefined : sessions.get(id);
    if (id !== undefined) sessions.delete(id);
    const state = oauth.generateRandomState();
    logoutStates.add(state);
    const url = new URL(as.end_session_endpoint as string);
    if (session) url.searchParams.set('id_token_hint', session.idToken);
    url.searchParams.set('client_id', options.clientId);
    url.searchParams.set('post_logout_redirect_uri', options.postLogoutRedirectUri);
    url.searchParams.set('state', state);
    res.setHeader('set-cookie', `${COOKIE}=; Max-Age=0; Path=/`);
    res.redirect(url.href);
  });

  app.get(new URL(options.postLogoutRedirectUri).pathname, (req, res) => {
    const state = String(req.query.state ?? '');
    res.json({ signed_out: logoutStates.delete(state) });
  });

  // Back-channel logout (OIDC Back-Channel Logout 1.0 §2.6): the provider posts a signed logout
  // token when the user's session there ends; every site session of that provider session ends.
  app.post('/backchannel-logout', async (req, res) => {
    try {
      const { payload } = await jwtVerify(String(req.body.logout_token ?? ''), jwks, {
        issuer: as.issuer,
        audience: options.clientId,
        typ: 'logout+jwt',
        maxTokenAge: '5 minutes',
      });
      const events = payload.events as Record<string, unknown> | undefined;
      if (typeof events?.[BACKCHANNEL_LOGOUT_EVENT] !== 'object' || 'nonce' in payload)
        throw new Error('not a logout token');
      if (typeof payload.sid !== 'string' && typeof payload.sub !== 'string')
        throw new Error('a logout token names a sid or a sub');
      for (const [id, session] of sessions) {
        const sameSession =
          payload.sid !== undefined ? session.sid === payload.sid : session.sub === payload.sub;
        if (sameSession) sessions.delete(id);
      }
      res.setHeader('cache-control', 'no-store');
      res.status(200).end();
    } catch {
      res.status(400).json({ error: 'invalid_request' });
    }
  });

  return { app, dpop, sessionCount: () => sessions.size };
}

/** Plain http only for a provider on this machine, during development. */
function isLoopbackHttp(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

// `node oauth4webapi.ts` runs the site on PORT (4000) for the client CLIENT_ID / CLIENT_SECRET,
// registered with $BASE_URL/callback and $BASE_URL/signed-out (and --id-token-alg ID_TOKEN_ALG),
// against the provider IDP_ISSUER.
if (import.meta.main) {
  const { IDP_ISSUER = 'http://localhost:3000', CLIENT_ID, CLIENT_SECRET, PORT = '4000' } = process.env;
  const baseUrl = process.env.BASE_URL ?? `http://localhost:${PORT}`;
  if (!CLIENT_ID || !CLIENT_SECRET) {
    console.error("Set CLIENT_ID and CLIENT_SECRET to those of the site's client.");
    process.exit(1);
  }
  const { app } = await createSite({
    issuer: IDP_ISSUER,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${baseUrl}/callback`,
    postLogoutRedirectUri: `${baseUrl}/signed-out`,
    idTokenAlg: (process.env.ID_TOKEN_ALG ?? 'RS256') as SiteOptions['idTokenAlg'],
    allowInsecureRequests: isLoopbackHttp(IDP_ISSUER),
  });
  app.listen(Number(PORT), (error) => {
    if (error) throw error;
    process.stdout.write(`Sign in at ${baseUrl}/login\n`);
  });
}
