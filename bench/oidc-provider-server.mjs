/**
 * The reference: oidc-provider (panva), the leading Node.js OpenID provider, in its own process, set up
 * to do the same work as our service in the benchmark's scenarios (userinfo, code exchange, refresh).
 * bench/run.ts spawns it (pinned to core 0), waits for the `Server listening at` line on stdout, mints
 * tokens through POST /bench/mint and loads it with autocannon. Stops cleanly on SIGTERM.
 *
 * Env: PORT (default 3902); OIDC_PROVIDER_NOTICES=1 lets oidc-provider's start-up notices through to
 * stderr (they are silenced otherwise, so stdout has exactly one line).
 *
 * Endpoints (oidc-provider's default routes): GET /me (userinfo), POST /token, GET /auth, GET /jwks,
 * GET /.well-known/openid-configuration; ours: GET /interaction/:uid (auto-approves, see below) and
 *   POST /bench/mint {"kind":"access_token"|"authorization_code"|"refresh_token","count":1..500000}
 *   → {"values":[...],"code_verifier":"..."} (code_verifier: the PKCE verifier every minted code needs).
 *
 * Choices, so that the comparison is fair:
 * - Storage in memory, no database. Not oidc-provider's MemoryAdapter: that one is an LRU capped at 1000
 *   entries, so the ~200,000 tokens a run mints would be evicted. MapAdapter below implements the same
 *   adapter interface (upsert, find, findByUid, findByUserCode, consume, destroy, revokeByGrantId) on
 *   plain Maps, with the same semantics (stored payloads returned by reference, entries expire with
 *   their TTL, a per-grant index for revokeByGrantId) and no capacity limit.
 * - Issuer http://127.0.0.1:<port>; one RS256 signing key generated at start: id_tokens are RS256 like
 *   ours.
 * - One confidential client, `bench` / `bench-secret`, client_secret_basic, authorization_code +
 *   refresh_token, redirect_uri https://bench.example/cb, response_type code.
 * - Scopes openid profile email offline_access; claims profile → name, preferred_username, picture and
 *   email → email, email_verified. findAccount reads from an in-process Map of 200 accounts (user_0 …
 *   user_199), as our userinfo reads the user from an in-process cache.
 * - Access tokens opaque (oidc-provider's default), 1 h; refresh tokens 24 h and rotated on every use
 *   (rotateRefreshToken: true; oidc-provider's default rotates only public clients' tokens or past 70 %
 *   of their life), since ours rotate on every use. Other defaults kept: resource indicators on (a
 *   token request without `resource` gets an opaque userinfo token), conformIdTokenClaims (the id_token
 *   of a code exchange carries sub, nonce, aud, iat, exp, iss; the profile claims are served at userinfo).
 * - PKCE: oidc-provider 9 requires it only for public clients (and FAPI 2.0); every code minted here
 *   carries an S256 challenge, so every exchange checks a code_verifier, and pkce.required is set to
 *   always so that the real authorize flow needs one too.
 * - devInteractions off; GET /interaction/:uid logs in user_0 (login prompt) and approves every requested
 *   scope and claim in a Grant (consent prompt), so the authorize flow runs without a browser:
 *   GET /auth?…&prompt=consent (oidc-provider ignores offline_access without prompt=consent) → 303 to
 *   /interaction/:uid → 303 back to /auth/:uid → … → 303 to https://bench.example/cb?code=…
 * - Minted artifacts go through oidc-provider's own models (Grant, AccessToken, AuthorizationCode,
 *   RefreshToken, each .save()), spread round-robin over the 200 accounts. Each mint call saves one
 *   Grant per account (openid profile email offline_access and the claims) and puts that account's
 *   tokens on it (our bench seeds its refresh tokens so); a request reads the one Grant its token names,
 *   so the count of tokens per grant costs nothing per request. A grant per token would double the
 *   minting time and memory (200,000 take ~4–6 s as it is). Mind that oidc-provider answers a replayed
 *   code or refresh token by revoking its whole grant, here 1/200 of that call's tokens: use each
 *   minted value once.
 *   Access tokens are minted with scope openid profile email, codes and refresh tokens with all four
 *   scopes; all minted values live 24 h (codes are minted for a whole run up front).
 * - No output per request; the provider is mounted with provider.callback() on a plain node:http server
 *   (it is a Koa app itself: no web framework needed).
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';

// oidc-provider prints development notices with console.info / console.warn. With this configuration
// the only one left is printed when it is imported (on a Node.js older than the one it
// supports), so the filter goes in before the dynamic import.
if (!process.env.OIDC_PROVIDER_NOTICES) {
  for (const method of ['info', 'warn']) {
    const original = console[method].bind(console);
    console[method] = (first, ...rest) => {
      if (typeof first === 'string' && /oidc-provider (NOTICE|WARNING): /.test(first)) return;
      original(first, ...rest);
    };
  }
} else {
  console.info = console.error; // stdout keeps its one line
}
const { default: Provider } = await import('oidc-provider');

const PORT = Number(process.env.PORT ?? 3902);
const ISSUER = `http://127.0.0.1:${PORT}`;
const CLIENT_ID = 'bench';
const REDIRECT_URI = 'https://bench.example/cb';
const SCOPE = 'openid profile email offline_access';
const ACCESS_TOKEN_SCOPE = 'openid profile email';
const CLAIMS = {
  openid: ['sub'],
  profile: ['name', 'preferred_username', 'picture'],
  email: ['email', 'email_verified'],
};
const GRANTED_CLAIMS = Object.values(CLAIMS).flat();
const ACCOUNTS = 200;
const MINT_LIMIT = 500_000;
const epochTime = () => Math.floor(Date.now() / 1000);

const accounts = new Map();
for (let i = 0; i < ACCOUNTS; i++) {
  const accountId = `user_${i}`;
  const claims = {
    sub: accountId,
    name: `Bench ${i}`,
    preferred_username: `bench_user_${i}`,
    picture: `https://bench.example/avatars/${i}.png`,
    email: `bench${i}@example.com`,
    email_verified: true,
  };
  accounts.set(accountId, { accountId, claims: async () => claims });
}

// MapAdapter: see the top comment. One store for every model, as oidc-provider's MemoryAdapter has.
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);
const CLOCK_TOLERANCE = 15; // oidc-provider's default clockTolerance, which its MemoryAdapter adds too
const store = new Map(); // `${model}:${id}` → { payload, expiresAt }
const grantMembers = new Map(); // grantId → Set of store keys
const sessionUids = new Map(); // session uid → session id
const userCodes = new Map(); // user code → device code id

class MapAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const expiresAt =
      typeof expiresIn === 'number' ? Date.now() + (expiresIn + CLOCK_TOLERANCE) * 1000 : Infinity;
    const previous = store.get(key);
    if (previous) this.unindex(key, previous.payload);
    store.set(key, { payload, expiresAt });
    if (this.model === 'Session') sessionUids.set(payload.uid, id);
    if (payload.userCode) userCodes.set(payload.userCode, id);
    if (GRANTABLE.has(this.model) && payload.grantId) {
      const members = grantMembers.get(payload.grantId);
      if (members) members.add(key);
      else grantMembers.set(payload.grantId, new Set([key]));
    }
  }

  async find(id) {
    return live(this.key(id))?.payload;
  }

  async findByUid(uid) {
    const id = sessionUids.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode) {
    const id = userCodes.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const entry = live(this.key(id));
    if (entry) entry.payload.consumed = epochTime();
  }

  async destroy(id) {
    const key = this.key(id);
    const entry = store.get(key);
    if (!entry) return;
    store.delete(key);
    this.unindex(key, entry.payload);
  }

  async revokeByGrantId(grantId) {
    const members = grantMembers.get(grantId);
    if (!members) return;
    grantMembers.delete(grantId);
    for (const key of members) {
      const entry = store.get(key);
      store.delete(key);
      if (entry) unindexSecondary(key, entry.payload);
    }
  }

  unindex(key, payload) {
    unindexSecondary(key, payload);
    if (GRANTABLE.has(this.model) && payload.grantId) {
      const members = grantMembers.get(payload.grantId);
      members?.delete(key);
      if (members?.size === 0) grantMembers.delete(payload.grantId);
    }
  }
}

/** The entry at `key`, unless it has expired (then it is dropped). */
function live(key) {
  const entry = store.get(key);
  if (!entry) return undefined;
  if (entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry;
}

function unindexSecondary(key, payload) {
  const id = key.slice(key.indexOf(':') + 1);
  if (payload.uid && sessionUids.get(payload.uid) === id) sessionUids.delete(payload.uid);
  if (payload.userCode && userCodes.get(payload.userCode) === id) userCodes.delete(payload.userCode);
}

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'bench-rs256' };

const provider = new Provider(ISSUER, {
  adapter: MapAdapter,
  jwks: { keys: [signingKey] },
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: 'bench-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT_URI],
      response_types: ['code'],
    },
  ],
  scopes: SCOPE.split(' '),
  claims: CLAIMS,
  findAccount: (_ctx, sub) => accounts.get(sub),
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // Numbers rather than oidc-provider's default functions (which print a notice when first called).
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 60,
    IdToken: 3600,
    RefreshToken: 24 * 3600,
    Grant: 14 * 24 * 3600,
    Session: 14 * 24 * 3600,
    Interaction: 3600,
  },
  renderError: (ctx, out) => {
    ctx.type = 'json';
    ctx.body = out;
  },
});

/** The auto-approving interaction: log in user_0, then grant every requested scope and claim. */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'user_0' } });
    return;
  }
  // consent
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

// Minting: the same artifacts the token endpoint and the authorize flow save, made directly.
const CODE_VERIFIER = randomBytes(32).toString('base64url');
const CODE_CHALLENGE = createHash('sha256').update(CODE_VERIFIER).digest('base64url');
const MINTED_TTL = 24 * 3600;

async function newGrant(accountId) {
  const grant = new provider.Grant({ accountId, clientId: CLIENT_ID });
  grant.addOIDCScope(SCOPE);
  grant.addOIDCClaims(GRANTED_CLAIMS);
  return grant.save();
}

const minters = {
  access_token: (accountId, grantId) =>
    new provider.AccessToken({
      accountId,
      clientId: CLIENT_ID,
      grantId,
      gty: 'authorization_code',
      scope: ACCESS_TOKEN_SCOPE,
      expiresWithSession: false,
      expiresIn: MINTED_TTL,
    }).save(),
  authorization_code: (accountId, grantId, i) =>
    new provider.AuthorizationCode({
      accountId,
      clientId: CLIENT_ID,
      grantId,
      scope: SCOPE,
      redirectUri: REDIRECT_URI,
      nonce: `n-${i}`, // echoed in the id_token; distinct per code (random bytes would slow minting)
      codeChallenge: CODE_CHALLENGE,
      codeChallengeMethod: 'S256',
      authTime: epochTime(),
      expiresWithSession: false,
      expiresIn: MINTED_TTL,
    }).save(),
  refresh_token: (accountId, grantId) =>
    new provider.RefreshToken({
      accountId,
      clientId: CLIENT_ID,
      grantId,
      gty: 'authorization_code',
      scope: SCOPE,
      authTime: epochTime(),
      rotations: 0,
      expiresWithSession: false,
      expiresIn: MINTED_TTL,
    }).save(),
};

async function mint(req, res) {
  let request;
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return send(res, 400, { error: 'body must be JSON' });
  }
  const minter = Object.hasOwn(minters, request?.kind) ? minters[request.kind] : undefined;
  const count = request?.count;
  if (!minter || !Number.isInteger(count) || count < 1 || count > MINT_LIMIT) {
    return send(res, 400, {
      error: `expected {"kind": ${Object.keys(minters).join(' | ')}, "count": 1..${MINT_LIMIT}}`,
    });
  }
  // A grant per account per call, each token on its account's grant (see the top comment).
  const accountIds = [...accounts.keys()];
  const grantIds = await Promise.all(accountIds.map(newGrant));
  const values = new Array(count);
  for (let i = 0; i < count; i++)
    values[i] = await minter(accountIds[i % ACCOUNTS], grantIds[i % ACCOUNTS], i);
  const body = { values };
  if (request.kind === 'authorization_code') body.code_verifier = CODE_VERIFIER;
  send(res, 200, body);
}

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

const handle = provider.callback();
/** Our two routes; everything else is oidc-provider's. */
function ourRoute(req) {
  if (req.url === '/bench/mint' && req.method === 'POST') return mint;
  if (req.url.startsWith('/interaction/')) return interaction;
  return undefined;
}
const server = http.createServer((req, res) => {
  const route = ourRoute(req);
  if (!route) return handle(req, res);
  route(req, res).catch((error) => {
    if (!res.headersSent) send(res, 500, { error: String(error?.message ?? error) });
    else res.destroy();
  });
});

server.listen(PORT, '127.0.0.1', () => {
  console.log(`Server listening at ${ISSUER}`);
});

process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
