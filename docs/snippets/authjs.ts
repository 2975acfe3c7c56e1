/**
 * "Sign in with …" with Auth.js: the provider as a generic OpenID Connect provider, and an
 * Auth.js configuration whose session carries the user's id and username.
 * npm install @auth/core@0.41
 * (next-auth, @auth/express and @auth/sveltekit take the same configuration.)
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Auth, type AuthConfig } from '@auth/core';
import type { OIDCConfig } from '@auth/core/providers';

/** The id_token claims of the scopes `openid profile email`. */
export interface IdpProfile extends Record<string, unknown> {
  sub: string;
  id: number;
  preferred_username: string;
  name: string;
  picture: string;
  email?: string;
  email_verified?: boolean;
}

export interface IdpProviderOptions {
  /** The provider's issuer (its PUBLIC_URL), e.g. https://id.example. */
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * Register the callback `<site>/auth/callback/idp` (Auth.js's basePath, then `callback/`, then
 * this id) as the client's redirect URI.
 */
export function idpProvider(options: IdpProviderOptions): OIDCConfig<IdpProfile> {
  return {
    id: 'idp',
    name: 'Example ID',
    type: 'oidc',
    issuer: options.issuer, // endpoints and keys from /.well-known/openid-configuration
    clientId: options.clientId,
    clientSecret: options.clientSecret, // sent with HTTP Basic (client_secret_basic)
    // The provider requires `state`; PKCE and the id_token's nonce on top.
    checks: ['pkce', 'state', 'nonce'],
    authorization: { params: { scope: 'openid profile email' } },
    profile: (profile) => ({
      id: profile.sub,
      name: profile.name,
      email: profile.email ?? null,
      image: profile.picture || null,
    }),
  };
}

export interface AuthOptions extends IdpProviderOptions {
  /** Encrypts the session cookie: `openssl rand -base64 33`. */
  secret: string;
}

export function authConfig(options: AuthOptions): AuthConfig {
  return {
    providers: [idpProvider(options)],
    secret: options.secret,
    basePath: '/auth',
    // Trust the Host header (behind your own proxy, or set AUTH_URL instead).
    trustHost: true,
    callbacks: {
      // Runs at sign-in with the provider's profile: keep what the session needs in the JWT.
      // (Without a database adapter, Auth.js's own user id is random: the user's id here is `sub`.)
      jwt({ token, profile }) {
        if (profile) Object.assign(token, { idp_sub: profile.sub, username: profile.preferred_username });
        return token;
      },
      session({ session, token }) {
        if (typeof token.idp_sub === 'string') session.user.id = token.idp_sub;
        Object.assign(session.user, { username: token.username });
        return session;
      },
    },
  };
}

/** Every request under /auth/… goes here (frameworks' Auth.js packages do this for you). */
export function handleAuth(request: Request, config: AuthConfig): Promise<Response> {
  return Auth(request, config);
}

// `node authjs.ts` runs a site on PORT (4000) for the client CLIENT_ID / CLIENT_SECRET, registered
// with the redirect URI http://localhost:4000/auth/callback/idp, against the provider IDP_ISSUER.
if (import.meta.main) {
  const { IDP_ISSUER = 'http://localhost:3000', CLIENT_ID, CLIENT_SECRET, PORT = '4000' } = process.env;
  if (!CLIENT_ID || !CLIENT_SECRET) {
    console.error("Set CLIENT_ID and CLIENT_SECRET to those of the site's client.");
    process.exit(1);
  }
  const config = authConfig({
    issuer: IDP_ISSUER,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    secret: process.env.AUTH_SECRET ?? randomBytes(33).toString('base64'),
  });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (!url.pathname.startsWith('/auth/')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<a href="/auth/signin">Sign in</a> · <a href="/auth/session">Session</a>');
      return;
    }
    // Node's request as a web Request and back (what @auth/express and the others do for you).
    const headers = new Headers();
    for (const [name, values] of Object.entries(req.headersDistinct))
      for (const value of values ?? []) headers.append(name, value);
    const body = req.method === 'POST' ? Buffer.concat(await req.toArray()) : undefined;
    const response = await handleAuth(new Request(url, { method: req.method, headers, body }), config);
    res.writeHead(response.status, [...response.headers].flat());
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  server.listen(Number(PORT), () =>
    process.stdout.write(`Sign in at http://localhost:${PORT}/auth/signin\n`),
  );
}
