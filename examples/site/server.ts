/**
 * An example third-party site that signs its users in with the identity provider, the way a site
 * developer would write it: OpenID Connect through openid-client (discovery, PKCE S256, state,
 * nonce, the code exchanged on this backend, userinfo), the user's profile, and, when its client
 * holds the wallet right, the coin balance and a "Charge 1 coin" button.
 *
 * Run it next to the service (see examples/site/README.md):
 *   npm start            # the identity provider, in one terminal
 *   npm run example      # this site, in another; then open http://localhost:4000
 *
 * Configuration (environment):
 *   IDP_ISSUER     the identity provider's issuer (its PUBLIC_URL), default http://localhost:3000
 *   CLIENT_ID      this site's client_id (pk_…); with CLIENT_SECRET (sk_…). When both are unset,
 *   CLIENT_SECRET  the site runs `idp demo --json` to get the demo client (same DATABASE_URL /
 *                  DATA_DIR as the service); that issues a new secret for the demo client each time
 *   EXAMPLE_PORT   where this site listens, default 4000 (HOST: default 127.0.0.1); PORT is read
 *                  when EXAMPLE_PORT is unset. The demo client of `idp demo` follows it
 *                  (`--site-port`)
 *   BASE_URL       this site's public URL, default http://localhost:<its port>; the redirect URI is
 *                  $BASE_URL/callback and must be registered for the client (on a loopback host
 *                  any port matches a registered one)
 *
 * An example, not a production site: sessions live in this process's memory (a restart signs
 * everyone out), and a real site would keep them in its own store.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { html, page, type SafeHtml } from './html.js';

// ---------------------------------------------------------------------------------------------
// Configuration

const ISSUER = (process.env.IDP_ISSUER || 'http://localhost:3000').replace(/\/+$/, '');
// EXAMPLE_PORT, the name `npm run dev` gives it (where PORT is the provider's); PORT still works alone.
const PORT = Number(process.env.EXAMPLE_PORT || process.env.PORT || 4000);
const HOST = process.env.HOST || '127.0.0.1';
const BASE_URL = (process.env.BASE_URL || `http://localhost:${PORT}`).replace(/\/+$/, '');
const REDIRECT_URI = `${BASE_URL}/callback`;

/** What the site asks for. `wallet` only works for a client with the wallet right (see below). */
const SCOPES = ['openid', 'profile', 'email'];
const WALLET_SCOPE = 'wallet';

/** Credentials: from the environment, or the demo client of `idp demo`. */
interface Credentials {
  clientId: string;
  clientSecret: string;
  /** Set when they came from `idp demo`: who to sign in as. */
  demoUser?: { username: string; password: string };
}

async function loadCredentials(): Promise<Credentials> {
  const { CLIENT_ID, CLIENT_SECRET } = process.env;
  if (CLIENT_ID && CLIENT_SECRET) return { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
  if (CLIENT_ID || CLIENT_SECRET) throw new Error('set both CLIENT_ID and CLIENT_SECRET, or neither');

  // No credentials: ask the service's CLI for its demo client. It reaches the same database as the
  // service (DATABASE_URL / DATA_DIR of this environment), through the running server if needed.
  const idp = path.resolve(import.meta.dirname, '../../bin/idp.js');
  const args = [idp, 'demo', '--site-port', String(PORT), '--json'];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    env: process.env,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`"idp demo --json" failed: ${(error.stderr || error.message).trim()}`);
  });
  const demo = JSON.parse(stdout) as {
    client: { client_id: string; client_secret: string };
    user: { username: string; password: string };
  };
  return {
    clientId: demo.client.client_id,
    clientSecret: demo.client.client_secret,
    demoUser: { username: demo.user.username, password: demo.user.password },
  };
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

// ---------------------------------------------------------------------------------------------
// OpenID Connect client (openid-client v6)

let oidcConfig: Promise<client.Configuration> | undefined;

/**
 * The provider's configuration, from its discovery document. Fetched on first use and kept; a
 * failure is not kept, so the site recovers once the provider is up.
 */
function getOidcConfig(credentials: Credentials): Promise<client.Configuration> {
  oidcConfig ??= client
    .discovery(
      new URL(ISSUER),
      credentials.clientId,
      credentials.clientSecret,
      // The client authenticates at the token endpoint with HTTP Basic.
      client.ClientSecretBasic(credentials.clientSecret),
      // openid-client refuses plain http. A provider on http://localhost is a development setup,
      // so only then is http allowed; anywhere else the issuer must be https.
      isLoopbackHttp(new URL(ISSUER)) ? { execute: [client.allowInsecureRequests] } : undefined,
    )
    .catch((error: unknown) => {
      oidcConfig = undefined;
      throw error;
    });
  return oidcConfig;
}

// ---------------------------------------------------------------------------------------------
// Sessions: a random id in a signed cookie, the data in memory (fine for an example only).

interface Session {
  /** Compared with the hidden field of every form this site posts (CSRF protection). */
  csrfToken: string;
  /** The sign-in in progress: what the callback must check. */
  pending?: { state: string; nonce: string; codeVerifier: string; scope: string };
  /** The signed-in user. */
  user?: {
    sub: string;
    profile: client.UserInfoResponse;
    accessToken: string;
    grantedScopes: string[];
  };
  /** A message for the next page view (the outcome of a charge). */
  flash?: { outcome: string; text: string };
}

const sessions = new Map<string, Session>();
const SESSION_COOKIE = 'example_session';

function sessionOf(request: FastifyRequest, reply: FastifyReply): Session {
  const signed = request.cookies[SESSION_COOKIE];
  const unsigned = signed ? request.unsignCookie(signed) : undefined;
  const existing = unsigned?.valid && unsigned.value ? sessions.get(unsigned.value) : undefined;
  if (existing) return existing;
  const id = randomBytes(32).toString('base64url');
  const session: Session = { csrfToken: randomBytes(32).toString('base64url') };
  sessions.set(id, session);
  reply.setCookie(SESSION_COOKIE, id, {
    signed: true,
    httpOnly: true,
    // Lax: the cookie comes along when the provider redirects the browser back to /callback.
    sameSite: 'lax',
    secure: BASE_URL.startsWith('https:'),
    path: '/',
  });
  return session;
}

function endSession(request: FastifyRequest, reply: FastifyReply): void {
  const signed = request.cookies[SESSION_COOKIE];
  const unsigned = signed ? request.unsignCookie(signed) : undefined;
  if (unsigned?.valid && unsigned.value) sessions.delete(unsigned.value);
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

function csrfValid(session: Session, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------
// Wallet calls: on this backend, with the user's access token.

/** Whether the provider said the client may not have the wallet scope (no wallet right). */
let walletRefused = false;

async function walletBalance(config: client.Configuration, accessToken: string): Promise<number | null> {
  const response = await client.fetchProtectedResource(
    config,
    accessToken,
    new URL(`${ISSUER}/api/v1/wallet/balance`),
    'GET',
  );
  if (!response.ok) return null;
  return ((await response.json()) as { balance: number }).balance;
}

async function charge(
  config: client.Configuration,
  accessToken: string,
  idempotencyKey: string,
): Promise<{ outcome: string; text: string }> {
  const response = await client.fetchProtectedResource(
    config,
    accessToken,
    new URL(`${ISSUER}/api/v1/wallet/charge`),
    'POST',
    JSON.stringify({
      amount: 1,
      currency: 'COIN',
      description: 'Example site: 1 coin',
      // The same key for the same purchase: a retry or a double submit never charges twice.
      idempotency_key: idempotencyKey,
    }),
    new Headers({ 'content-type': 'application/json' }),
  );
  const body = (await response.json()) as {
    transaction?: { id: string };
    balance?: number;
    error?: string;
    error_description?: string;
  };
  if (response.status === 201)
    return { outcome: 'charged', text: `Charged 1 coin (transaction ${body.transaction?.id}).` };
  if (response.status === 200)
    return {
      outcome: 'replayed',
      text: `This purchase was already paid (transaction ${body.transaction?.id}); nothing was charged again.`,
    };
  if (response.status === 402) return { outcome: 'insufficient_funds', text: 'Not enough coins.' };
  return { outcome: 'error', text: `The charge failed: ${body.error_description ?? response.status}` };
}

// ---------------------------------------------------------------------------------------------
// Pages

function signedOutPage(notice?: string): string {
  return page(
    'Example site',
    html`${notice && html`<p id="message" class="notice problem">${notice}</p>`}
<div class="card">
  <p>This site lets you sign in with the identity provider at <code>${ISSUER}</code>.</p>
  <p><a id="sign-in" class="button primary" href="/login">Sign in</a></p>
</div>`,
  );
}

function profilePage(session: Session, balance: number | null): string {
  const user = session.user;
  if (!user) return signedOutPage();
  const profile = user.profile as Record<string, unknown>;
  const text = (name: string) => (typeof profile[name] === 'string' ? (profile[name] as string) : '');
  const picture = text('picture');
  // Only http(s) images; an avatar URL is data from elsewhere.
  const avatar = /^https?:\/\//.test(picture) ? html`<img id="avatar" src="${picture}" alt="">` : '';
  const email = text('email');
  const flash = session.flash;
  session.flash = undefined;

  let wallet: SafeHtml | string = '';
  if (user.grantedScopes.includes(WALLET_SCOPE)) {
    wallet = html`<div class="card" id="wallet">
  <h2>Wallet</h2>
  <p>Balance: <strong id="balance" data-balance="${balance ?? ''}">${balance ?? 'unavailable'}</strong> coins</p>
  <form id="charge-form" method="post" action="/charge">
    <input type="hidden" name="csrf_token" value="${session.csrfToken}">
    <input type="hidden" name="idempotency_key" value="${`example-${randomUUID()}`}">
    <button id="charge" class="primary" type="submit">Charge 1 coin</button>
  </form>
</div>`;
  } else if (walletRefused) {
    wallet = html`<p id="no-wallet" class="muted">This site's client has no wallet right, so no coins here.</p>`;
  }

  return page(
    'Example site: signed in',
    html`${flash && html`<p id="result" class="notice${flash.outcome === 'charged' || flash.outcome === 'replayed' ? '' : ' problem'}" data-outcome="${flash.outcome}">${flash.text}</p>`}
<div class="card profile" id="profile">
  ${avatar}
  <div>
    <div><strong id="display-name">${text('display_name') || text('name')}</strong></div>
    <div class="muted">@<span id="profile-username">${text('preferred_username')}</span></div>
    ${email && html`<div>E-mail: <span id="email">${email}</span>${profile.email_verified === true ? ' (verified)' : ''}</div>`}
  </div>
</div>
${wallet}
<form class="inline" method="post" action="/logout">
  <input type="hidden" name="csrf_token" value="${session.csrfToken}">
  <button id="sign-out" type="submit">Sign out</button>
</form>`,
  );
}

function messagePage(title: string, text: string): string {
  return page(title, html`<div class="card"><p id="message">${text}</p><p><a href="/">Back</a></p></div>`);
}

/** Shown while the provider cannot be reached: the person learns it is not their fault and can retry. */
function providerDownPage(retryPath: string): string {
  return page(
    'Sign-in unavailable',
    html`<div class="card" id="provider-down">
  <h2>Sign-in is unavailable right now</h2>
  <p id="message">This site could not reach its sign-in service at <code>${ISSUER}</code>. It may be
  restarting or down for a moment. Nothing was changed; please try again in a minute.</p>
  <p><a id="retry" class="button primary" href="${retryPath}">Try again</a> <a class="button" href="/">Back</a></p>
</div>`,
  );
}

// ---------------------------------------------------------------------------------------------
// Errors: the provider unreachable is told apart from the site's own faults.

/** Network-level failures of fetch (undici): refused, reset, timed out, name not resolved. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/**
 * Whether an error means the provider did not answer (or answered with a server error): fetch's
 * `TypeError: fetch failed` carries the socket error as its cause, and openid-client wraps both.
 */
function providerUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; depth += 1) {
    const failure = cause as { code?: unknown; status?: unknown; name?: unknown; cause?: unknown };
    if (typeof failure.code === 'string' && NETWORK_ERROR_CODES.has(failure.code)) return true;
    if (failure.name === 'TimeoutError' || failure.name === 'AbortError') return true;
    if (typeof failure.status === 'number' && failure.status >= 500) return true;
    if (cause instanceof TypeError && cause.message === 'fetch failed') return true;
    cause = failure.cause;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The site

async function main(): Promise<void> {
  const credentials = await loadCredentials();
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL || 'warn' } });
  // Signs the session cookie; a fresh secret per start is enough while sessions live in memory.
  await app.register(cookie, { secret: process.env.COOKIE_SECRET || randomBytes(32).toString('hex') });
  await app.register(formbody);

  app.addHook('onSend', async (_request, reply) => {
    reply.header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; img-src http: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    reply.header('cache-control', 'no-store');
  });

  // A page, never Fastify's JSON 500: the provider being down is the likely cause, and says so.
  app.setErrorHandler((error, request, reply) => {
    reply.type('text/html; charset=utf-8');
    if (providerUnreachable(error)) {
      request.log.warn({ err: error }, 'identity provider unreachable');
      // A callback's code is spent with its attempt: trying again means signing in again.
      const retry =
        request.method !== 'GET' ? '/' : request.url.startsWith('/callback') ? '/login' : request.url;
      return reply.code(503).header('retry-after', '30').send(providerDownPage(retry));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(messagePage('Something went wrong', 'This page failed; please try again.'));
  });

  // No icon here (browsers ask for one on every site).
  app.get('/favicon.ico', async (_request, reply) => reply.code(204).send());

  app.get('/', async (request, reply) => {
    const session = sessionOf(request, reply);
    reply.type('text/html; charset=utf-8');
    if (!session.user) return signedOutPage();
    let balance: number | null = null;
    if (session.user.grantedScopes.includes(WALLET_SCOPE)) {
      try {
        balance = await walletBalance(await getOidcConfig(credentials), session.user.accessToken);
      } catch (error) {
        // 401 with WWW-Authenticate: the token no longer works (revoked by the user, account
        // disabled, expired). The site forgets the user, who signs in again.
        if (!(error instanceof client.WWWAuthenticateChallengeError)) throw error;
        session.user = undefined;
        return signedOutPage('Your sign-in has ended. Please sign in again.');
      }
    }
    return profilePage(session, balance);
  });

  // Step 1: send the browser to the provider, with PKCE, state and nonce kept in the session.
  app.get('/login', async (request, reply) => {
    const session = sessionOf(request, reply);
    const config = await getOidcConfig(credentials);
    const codeVerifier = client.randomPKCECodeVerifier();
    const scope = [...SCOPES, ...(walletRefused ? [] : [WALLET_SCOPE])].join(' ');
    session.pending = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier, scope };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: session.pending.state,
      nonce: session.pending.nonce,
    });
    return reply.redirect(url.href);
  });

  // Step 2: the provider sends the browser back with a code (or an error).
  app.get('/callback', async (request, reply) => {
    const session = sessionOf(request, reply);
    const pending = session.pending;
    const currentUrl = new URL(request.url, BASE_URL);
    reply.type('text/html; charset=utf-8');
    if (!pending || currentUrl.searchParams.get('state') !== pending.state) {
      return reply
        .code(400)
        .send(messagePage('Sign-in failed', 'This sign-in is not the one this site started.'));
    }
    session.pending = undefined;

    const error = currentUrl.searchParams.get('error');
    if (error === 'invalid_scope' && pending.scope.includes(WALLET_SCOPE)) {
      // The client lacks the wallet right: sign in again without the wallet.
      walletRefused = true;
      return reply.redirect('/login');
    }
    if (error === 'access_denied') return messagePage('Sign-in cancelled', 'You did not allow this site.');

    try {
      const config = await getOidcConfig(credentials);
      // Checks state and iss, sends the PKCE verifier, exchanges the code on this backend, and
      // validates the id_token (signature, issuer, audience, expiry, nonce).
      const tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const sub = tokens.claims()?.sub as string;
      const profile = await client.fetchUserInfo(config, tokens.access_token, sub);
      session.user = {
        sub,
        profile,
        accessToken: tokens.access_token,
        grantedScopes: (tokens.scope ?? '').split(' '),
      };
      return reply.redirect('/');
    } catch (failure) {
      if (providerUnreachable(failure)) throw failure;
      request.log.warn({ err: failure }, 'sign-in failed');
      return reply.code(400).send(messagePage('Sign-in failed', 'The sign-in could not be completed.'));
    }
  });

  // "Charge 1 coin": the form carries the idempotency key it was rendered with, so submitting the
  // same form twice (a double click, a retry) is one charge.
  app.post('/charge', async (request, reply) => {
    const session = sessionOf(request, reply);
    const form = (request.body ?? {}) as Record<string, unknown>;
    if (!session.user || !csrfValid(session, form.csrf_token)) return reply.redirect('/', 303);
    const key = form.idempotency_key;
    if (typeof key !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(key)) {
      session.flash = { outcome: 'error', text: 'The form was incomplete.' };
    } else {
      session.flash = await charge(await getOidcConfig(credentials), session.user.accessToken, key).catch(
        (error: unknown) => {
          // Unknown whether it went through: the same form sent again is safe (same key).
          request.log.warn({ err: error }, 'charge failed');
          return { outcome: 'error', text: 'The charge could not be completed; try again.' };
        },
      );
    }
    // Post/redirect/get: reloading the result page does not post again.
    return reply.redirect('/', 303);
  });

  // Signs out of this site (the session, and its access token revoked at the provider). The
  // provider's own sign-in stays, as with any "Sign in with …" button.
  app.post('/logout', async (request, reply) => {
    const session = sessionOf(request, reply);
    const form = (request.body ?? {}) as Record<string, unknown>;
    if (!csrfValid(session, form.csrf_token)) return reply.redirect('/', 303);
    if (session.user) {
      await client
        .tokenRevocation(await getOidcConfig(credentials), session.user.accessToken)
        .catch((error: unknown) => request.log.warn({ err: error }, 'token revocation failed'));
    }
    endSession(request, reply);
    return reply.redirect('/', 303);
  });

  await app.listen({ host: HOST, port: PORT });
  const lines = [`Example site listening at ${BASE_URL} (identity provider: ${ISSUER})`];
  if (credentials.demoUser) {
    lines.push(
      `Open ${BASE_URL} and sign in as ${credentials.demoUser.username} / ${credentials.demoUser.password} (the demo user of "idp demo").`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  // Discovery now, so that a provider that is not running is reported at once (the site keeps
  // trying on every request).
  getOidcConfig(credentials).catch((error: unknown) => {
    console.error(
      `example: the identity provider at ${ISSUER} did not answer (${error instanceof Error ? error.message : String(error)}); is "npm start" running?`,
    );
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void app.close().then(() => process.exit(0));
    });
  }
}

main().catch((error: unknown) => {
  console.error(`example: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
