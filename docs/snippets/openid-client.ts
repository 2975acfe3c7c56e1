/**
 * "Sign in with …" for an Express site, with openid-client v6: discovery, PKCE, state and nonce,
 * the id_token's claims checked, the profile from userinfo, sign-out with revocation.
 * npm install express@5 express-session@1 openid-client@6
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import * as oidc from 'openid-client';

export interface SiteOptions {
  /** The provider's issuer (its PUBLIC_URL), e.g. https://id.example. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registered with the client, e.g. https://mysite.example/callback. */
  redirectUri: string;
  /** Signs the site's own session cookie. */
  sessionSecret: string;
  /** Default: openid profile email. */
  scope?: string;
  /** Only for a provider on plain http://localhost during development: openid-client refuses http otherwise. */
  allowInsecureRequests?: boolean;
}

declare module 'express-session' {
  interface SessionData {
    /** What the callback must check: kept between /login and /callback. */
    pending?: { codeVerifier: string; state: string; nonce: string };
    profile?: oidc.UserInfoResponse;
    accessToken?: string;
  }
}

export async function createSite(options: SiteOptions): Promise<express.Express> {
  // Reads /.well-known/openid-configuration once; the client authenticates with HTTP Basic.
  const config = await oidc.discovery(
    new URL(options.issuer),
    options.clientId,
    undefined,
    oidc.ClientSecretBasic(options.clientSecret),
    options.allowInsecureRequests ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
  const callbackPath = new URL(options.redirectUri).pathname;

  const app = express();
  app.use(
    session({
      secret: options.sessionSecret,
      resave: false,
      saveUninitialized: false,
      // A memory store is for trying it out: use a shared store (Redis, SQL) in production.
      cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto' },
    }),
  );

  app.get('/login', async (req, res) => {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    req.session.pending = { codeVerifier, state, nonce };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: options.redirectUri,
      scope: options.scope ?? 'openid profile email',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    res.redirect(url.href);
  });

  app.get(callbackPath, async (req, res) => {
    const pending = req.session.pending;
    delete req.session.pending;
    if (!pending) {
      res.status(400).send('No sign-in is in progress in this browser. <a href="/login">Sign in</a>');
      return;
    }
    try {
      // Checks state, iss, the code exchange (with the PKCE verifier), the id_token and its nonce.
      const tokens = await oidc.authorizationCodeGrant(
        config,
        new URL(req.originalUrl, options.redirectUri),
        {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
        },
      );
      const claims = tokens.claims();
      if (!claims) throw new Error('no id_token in the token response');
      const profile = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      // A new session id for the signed-in user (no session fixation).
      await new Promise<void>((resolve, reject) =>
        req.session.regenerate((error) => (error ? reject(error) : resolve())),
      );
      req.session.profile = profile;
      req.session.accessToken = tokens.access_token;
      res.redirect('/');
    } catch (error) {
      // The user clicked Deny (access_denied), the code expired, the state did not match, …
      if (error instanceof oidc.AuthorizationResponseError && error.error === 'access_denied') {
        res.redirect('/?signin=cancelled');
        return;
      }
      res.status(400).send('Sign-in failed. <a href="/login">Try again</a>');
    }
  });

  app.get('/', (req, res) => {
    const profile = req.session.profile;
    if (!profile) {
      res.status(401).json({ signed_in: false });
      return;
    }
    res.json({ signed_in: true, sub: profile.sub, username: profile.preferred_username, profile });
  });

  app.post('/logout', async (req, res) => {
    const token = req.session.accessToken;
    // Ends the access token at the provider too; it answers 200 whatever the token was.
    if (token) await oidc.tokenRevocation(config, token, { token_type_hint: 'access_token' });
    req.session.destroy(() => res.redirect('/'));
  });

  return app;
}

/** Plain http only for a provider on this machine, during development. */
function isLoopbackHttp(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

// `node openid-client.ts` runs the site on PORT (4000) for the client CLIENT_ID / CLIENT_SECRET,
// registered with the redirect URI $BASE_URL/callback, against the provider IDP_ISSUER.
if (import.meta.main) {
  const { IDP_ISSUER = 'http://localhost:3000', CLIENT_ID, CLIENT_SECRET, PORT = '4000' } = process.env;
  const baseUrl = process.env.BASE_URL ?? `http://localhost:${PORT}`;
  if (!CLIENT_ID || !CLIENT_SECRET) {
    console.error("Set CLIENT_ID and CLIENT_SECRET to those of the site's client.");
    process.exit(1);
  }
  const app = await createSite({
    issuer: IDP_ISSUER,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${baseUrl}/callback`,
    sessionSecret: process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url'),
    allowInsecureRequests: isLoopbackHttp(IDP_ISSUER),
  });
  app.listen(Number(PORT), (error) => {
    if (error) throw error;
    process.stdout.write(`Sign in at ${baseUrl}/login\n`);
  });
}
