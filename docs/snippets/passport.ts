/**
 * "Sign in with …" for an Express site, with Passport's generic OAuth 2.0 strategy: state and
 * PKCE kept in the session, the profile from userinfo.
 * npm install express@5 express-session@1 passport@0.7 passport-oauth2@1
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import passportModule from 'passport';
import OAuth2Strategy from 'passport-oauth2';

export interface SiteOptions {
  /** The provider's base URL (its PUBLIC_URL), e.g. https://id.example. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registered with the client, e.g. https://mysite.example/callback. */
  redirectUri: string;
  sessionSecret: string;
  /** Default: openid profile email. */
  scope?: string;
}

/** What the site keeps of the user: a few userinfo claims. */
export interface SignedInUser {
  sub: string;
  username: string;
  name: string;
  email?: string;
}

export function createSite(options: SiteOptions): express.Express {
  const passport = new passportModule.Passport(); // one Passport per site, not the global one
  const strategy = new OAuth2Strategy(
    {
      authorizationURL: `${options.issuer}/api/v1/oauth/authorize`,
      tokenURL: `${options.issuer}/api/v1/oauth/token`,
      clientID: options.clientId,
      clientSecret: options.clientSecret, // sent in the token request's body (client_secret_post)
      callbackURL: options.redirectUri,
      scope: options.scope ?? 'openid profile email',
      state: true, // required by the provider; checked on the way back
      pkce: true, // S256
    },
    (
      _accessToken: string,
      _refreshToken: string,
      profile: SignedInUser,
      done: OAuth2Strategy.VerifyCallback,
    ) =>
      // Find or create the site's own account for profile.sub here.
      done(null, profile),
  );
  // passport-oauth2 knows no profile endpoint of its own: read userinfo with the access token.
  strategy.userProfile = (accessToken, done) => {
    fetch(`${options.issuer}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })
      .then(async (response) => {
        if (!response.ok) throw new Error(`userinfo answered ${response.status}`);
        const claims = (await response.json()) as Record<string, unknown>;
        const user: SignedInUser = {
          sub: String(claims.sub),
          username: String(claims.preferred_username),
          name: String(claims.name),
          ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
        };
        done(null, user);
      })
      .catch((error: unknown) => done(error));
  };
  passport.use('idp', strategy);
  passport.serializeUser((user, done) => done(null, user));
  passport.deserializeUser((user: SignedInUser, done) => done(null, user));

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
  app.use(passport.session());

  app.get('/login', passport.authenticate('idp'));
  app.get(
    new URL(options.redirectUri).pathname,
    // A wrong or missing state, or Deny on the consent page, lands on /?signin=failed.
    passport.authenticate('idp', { failureRedirect: '/?signin=failed' }),
    (_req, res) => res.redirect('/'),
  );
  app.get('/', (req, res) => {
    const user = req.user as SignedInUser | undefined;
    if (!user) {
      res.status(401).json({ signed_in: false });
      return;
    }
    res.json({ signed_in: true, sub: user.sub, username: user.username, user });
  });
  app.post('/logout', (req, res, next) => {
    req.logout((error) => (error ? next(error) : res.redirect('/')));
  });
  return app;
}

// `node passport.ts` runs the site on PORT (4000) for the client CLIENT_ID / CLIENT_SECRET,
// registered with the redirect URI $BASE_URL/callback, against the provider IDP_ISSUER.
if (import.meta.main) {
  const { IDP_ISSUER = 'http://localhost:3000', CLIENT_ID, CLIENT_SECRET, PORT = '4000' } = process.env;
  const baseUrl = process.env.BASE_URL ?? `http://localhost:${PORT}`;
  if (!CLIENT_ID || !CLIENT_SECRET) {
    console.error("Set CLIENT_ID and CLIENT_SECRET to those of the site's client.");
    process.exit(1);
  }
  const app = createSite({
    issuer: IDP_ISSUER,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${baseUrl}/callback`,
    sessionSecret: process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url'),
  });
  app.listen(Number(PORT), (error) => {
    if (error) throw error;
    process.stdout.write(`Sign in at ${baseUrl}/login\n`);
  });
}
