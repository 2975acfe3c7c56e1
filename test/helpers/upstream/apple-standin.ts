import { createServer, type ServerResponse } from 'node:http';
import { type CryptoKey, exportJWK, exportPKCS8, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import {
  escapeHtml,
  listen,
  type Misbehaviour,
  parseBody,
  pkceMatches,
  type RecordedRequest,
  randomToken,
  readBody,
  redirect,
  redirectUriAllowed,
  type StandInHandle,
  sendGarbage,
  sendHtml,
  sendJson,
  stopServer,
  withQuery,
} from './shared.js';

/*
 * Sign in with Apple, shaped as Apple documents its REST API and web sign-in: discovery,
 * /auth/authorize, /auth/token and /auth/keys, at the stand-in's url as issuer. Like Apple: a
 * request for the name or email scope must use response_mode=form_post; the `user` form field
 * (name and address) comes only with an account's first authorization by this client; the
 * client_secret is an ES256 JWT signed with the operator's key (Apple's "Creating a client
 * secret": kid, iss = team, sub = Services ID, aud = issuer, at most six months); the id_token
 * has email_verified and is_private_email as strings; there is no iss in the authorization
 * response. The operator's key pair is made at start: `privateKeyPem` is the .p8 file.
 * Redirect URIs: as in shared.ts's redirectUriAllowed.
 */

export interface AppleAccount {
  sub: string;
  email: string;
  /** Default true. */
  email_verified?: boolean;
  firstName?: string;
  lastName?: string;
}

export interface AppleStandInOptions {
  /** By name; `nextAccount` names one of them. */
  accounts: Record<string, AppleAccount>;
  /** The account approved first; the first of `accounts` when not given. */
  account?: string;
  /** The Services ID; default com.example.idp. */
  clientId?: string;
  /** Default TEAM123456. */
  teamId?: string;
  /** Default KEY1234567. */
  keyId?: string;
  redirectUris?: string[];
}

export interface AppleStandIn extends StandInHandle {
  readonly clientId: string;
  readonly teamId: string;
  readonly keyId: string;
  /** The operator's private key, PKCS#8 PEM (what Apple hands out as a .p8 file). */
  readonly privateKeyPem: string;
  /** Replaces the accepted redirect URIs; [] accepts any loopback http URI again. */
  setRedirectUris(uris: string[]): void;
  /** Forgets which accounts authorized already, so the next form post carries `user` again. */
  forgetAuthorizations(): void;
}

export { formPostFields } from './shared.js';

function formPostPage(action: string, fields: Record<string, string | undefined>): string {
  const inputs = Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<!DOCTYPE html><html><head><title>Sign in with Apple</title></head><body><form method="post" action="${escapeHtml(action)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>document.forms[0].submit()</script></body></html>`;
}

interface IssuedCode {
  account: AppleAccount;
  redirectUri: string;
  challenge: string | undefined;
  nonce: string | undefined;
  email: boolean;
  authTime: number;
  expiresAt: number;
}

/** Apple's limit on a client secret's lifetime: 15,777,000 seconds, six months. */
const MAX_SECRET_LIFETIME = 15_777_000;

export async function startAppleStandIn(options: AppleStandInOptions): Promise<AppleStandIn> {
  const clientId = options.clientId ?? 'com.example.idp';
  const teamId = options.teamId ?? 'TEAM123456';
  const keyId = options.keyId ?? 'KEY1234567';
  const requests: RecordedRequest[] = [];
  let allowedUris = [...(options.redirectUris ?? [])];
  let mode: Misbehaviour | null = null;
  const codes = new Map<string, IssuedCode>();
  const authorized = new Set<string>();
  const operator = await generateKeyPair('ES256', { extractable: true });
  const signing = await generateKeyPair('RS256', { extractable: true });
  const signingKid = 'standin-apple-rs256';

  const authorize = (res: ServerResponse, query: Record<string, string>) => {
    const refuse = (error: string, description: string) =>
      sendHtml(res, 400, `<html><body><p>${error}</p><p>${escapeHtml(description)}</p></body></html>`);
    if (query.client_id !== clientId)
      return refuse('invalid_client', 'Invalid client id or web redirect url.');
    const redirectUri = query.redirect_uri;
    if (!redirectUri || !redirectUriAllowed(redirectUri, allowedUris))
      return refuse('invalid_request', 'Invalid web redirect url.');
    if (!(query.response_type ?? '').split(' ').includes('code'))
      return refuse('unsupported_response_type', 'response_type must include code.');
    const scopes = (query.scope ?? '').split(' ');
    const wantsUser = scopes.includes('name') || scopes.includes('email');
    const responseMode = query.response_mode ?? 'query';
    if (wantsUser && responseMode !== 'form_post')
      return refuse(
        'invalid_request',
        'response_mode must be form_post when name or email scope is requested.',
      );
    if (query.code_challenge !== undefined && query.code_challenge_method !== 'S256')
      return refuse('invalid_request', 'code_challenge_method must be S256.');
    const account = options.accounts[standIn.nextAccount];
    let fields: Record<string, string | undefined>;
    if (mode === 'error' || !account) {
      const error_description = account
        ? 'The user cancelled.'
        : `no stand-in account ${standIn.nextAccount}`;
      fields = { error: 'access_denied', error_description, state: query.state };
    } else {
      const code = randomToken('c.');
      codes.set(code, {
        account,
        redirectUri,
        challenge: query.code_challenge,
        nonce: query.nonce,
        email: scopes.includes('email'),
        authTime: Math.floor(Date.now() / 1000),
        expiresAt: Date.now() + 5 * 60_000,
      });
      const first = !authorized.has(account.sub);
      authorized.add(account.sub);
      const user =
        first && wantsUser
          ? JSON.stringify({
              ...(scopes.includes('name')
                ? { name: { firstName: account.firstName, lastName: account.lastName } }
                : {}),
              ...(scopes.includes('email') ? { email: account.email } : {}),
            })
          : undefined;
      fields = { code, state: query.state, user };
    }
    if (responseMode === 'form_post') return sendHtml(res, 200, formPostPage(redirectUri, fields));
    if (responseMode !== 'fragment') return redirect(res, withQuery(redirectUri, fields));
    const defined = Object.entries(fields).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    );
    redirect(res, `${redirectUri}#${new URLSearchParams(defined)}`);
  };

  const clientSecretValid = async (secret: string | undefined): Promise<boolean> => {
    if (!secret) return false;
    try {
      const { payload, protectedHeader } = await jwtVerify(secret, operator.publicKey, {
        algorithms: ['ES256'],
        issuer: teamId,
        subject: clientId,
        audience: url,
        requiredClaims: ['exp'],
      });
      const now = Math.floor(Date.now() / 1000);
      return protectedHeader.kid === keyId && (payload.exp ?? 0) <= now + MAX_SECRET_LIFETIME;
    } catch {
      return false;
    }
  };

  const token = async (res: ServerResponse, params: Record<string, string>) => {
    if (mode === 'garbage') return sendGarbage(res);
    if (params.client_id !== clientId || !(await clientSecretValid(params.client_secret)))
      return sendJson(res, 400, { error: 'invalid_client' });
    if (params.grant_type !== 'authorization_code')
      return sendJson(res, 400, { error: 'unsupported_grant_type' });
    const code = params.code === undefined ? undefined : codes.get(params.code);
    if (params.code !== undefined) codes.delete(params.code);
    if (
      !code ||
      code.expiresAt < Date.now() ||
      params.redirect_uri !== code.redirectUri ||
      !pkceMatches(code.challenge, params.code_verifier)
    )
      return sendJson(res, 400, {
        error: 'invalid_grant',
        error_description: 'The code has expired or has been revoked.',
      });
    const { account } = code;
    const idToken = await new SignJWT({
      ...(code.nonce === undefined ? {} : { nonce: code.nonce, nonce_supported: true }),
      ...(code.email
        ? {
            email: account.email,
            email_verified: String(account.email_verified ?? true),
            is_private_email: String(account.email.endsWith('@privaterelay.appleid.com')),
          }
        : {}),
      auth_time: code.authTime,
    })
      .setProtectedHeader({ alg: 'RS256', kid: signingKid })
      .setIssuer(url)
      .setAudience(clientId)
      .setSubject(account.sub)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(signing.privateKey);
    sendJson(res, 200, {
      access_token: randomToken('a.'),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: randomToken('r.'),
      id_token: idToken,
    });
  };

  const discovery = () => ({
    issuer: url,
    authorization_endpoint: `${url}/auth/authorize`,
    token_endpoint: `${url}/auth/token`,
    revocation_endpoint: `${url}/auth/revoke`,
    jwks_uri: `${url}/auth/keys`,
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'email', 'name'],
    token_endpoint_auth_methods_supported: ['client_secret_post'],
    claims_supported: ['aud', 'email', 'email_verified', 'exp', 'iat', 'is_private_email', 'iss', 'nonce'],
  });

  const server = createServer((req, res) => {
    void (async () => {
      const target = new URL(req.url ?? '/', url);
      const params =
        req.method === 'POST'
          ? parseBody(req, await readBody(req))
          : Object.fromEntries(target.searchParams.entries());
      requests.push({
        method: req.method ?? 'GET',
        path: target.pathname,
        params,
        headers: { ...req.headers },
      });
      const route = `${req.method} ${target.pathname}`;
      if (route === 'GET /.well-known/openid-configuration') return sendJson(res, 200, discovery());
      if (route === 'GET /auth/keys') {
        const jwk = await exportJWK(signing.publicKey);
        return sendJson(res, 200, { keys: [{ ...jwk, kid: signingKid, use: 'sig', alg: 'RS256' }] });
      }
      if (route === 'GET /auth/authorize') return authorize(res, params);
      if (route === 'POST /auth/token') return token(res, params);
      sendJson(res, 404, { error: 'not_found' });
    })().catch(() => res.destroy());
  });
  const url = await listen(server);

  const standIn: AppleStandIn = {
    url,
    requests,
    nextAccount: options.account ?? Object.keys(options.accounts)[0] ?? '',
    clientId,
    teamId,
    keyId,
    privateKeyPem: await exportPKCS8(operator.privateKey as CryptoKey),
    misbehave(value) {
      mode = value;
    },
    setRedirectUris(uris) {
      allowedUris = [...uris];
    },
    forgetAuthorizations() {
      authorized.clear();
    },
    stop: () => stopServer(server),
  };
  return standIn;
}
