import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ProviderContext } from 'oidc-provider';
import {
  listen,
  type Misbehaviour,
  type RecordedRequest,
  readBody,
  redirectUriAllowed,
  type StandInHandle,
  sendGarbage,
  sendHtml,
  stopServer,
} from './shared.js';

/*
 * A generic OpenID provider for tests: oidc-provider 9, a certified OpenID Provider, on
 * 127.0.0.1. It approves whoever `nextAccount` names without a page: the authorization endpoint
 * answers with one redirect straight to redirect_uri (code, state and RFC 9207's iss), because
 * the stand-in walks oidc-provider's interaction (/interaction/:uid, answered with
 * interactionDetails and interactionFinished) and its resume step itself, cookies and all.
 *
 * Redirect URIs: oidc-provider checks them with Client#redirectUriAllowed, which the stand-in
 * replaces. With `redirectUris` given (or set later by setRedirectUris) only those are accepted;
 * with none, any http URI on 127.0.0.1 or localhost is, as the service's port is often known only
 * after it starts.
 */

export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
  /** Put in the id_token as `amr` (OpenID Connect Core §2, RFC 8176 values). */
  amr?: string[];
}

export interface OidcStandInOptions {
  clientId: string;
  clientSecret: string;
  redirectUris?: string[];
  /** By login; `nextAccount` names one of them. */
  accounts: Record<string, OidcAccount>;
  /** The account approved first; the first of `accounts` when not given. */
  account?: string;
}

export interface OidcStandIn extends StandInHandle {
  /** Replaces the accepted redirect URIs; [] accepts any loopback http URI again. */
  setRedirectUris(uris: string[]): void;
}

/** Marks the stand-in's own requests to itself, which are neither walked again nor recorded. */
const HOP_HEADER = 'x-standin-hop';

/** oidc-provider's storage interface, in memory, one store per stand-in. */
function memoryAdapter(store: Map<string, { payload: Record<string, unknown>; expiresAt: number }>) {
  return (model: string) => {
    const key = (id: string) => `${model}:${id}`;
    const find = (id: string) => {
      const entry = store.get(key(id));
      return entry && entry.expiresAt > Date.now() ? entry.payload : undefined;
    };
    const each = (match: (payload: Record<string, unknown>) => boolean) =>
      [...store.entries()].filter(([name, entry]) => name.startsWith(`${model}:`) && match(entry.payload));
    return {
      async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
        store.set(key(id), { payload, expiresAt: Date.now() + (expiresIn ?? 3600) * 1000 });
      },
      async find(id: string) {
        return find(id);
      },
      async findByUid(uid: string) {
        return each((payload) => payload.uid === uid)[0]?.[1].payload;
      },
      async findByUserCode(userCode: string) {
        return each((payload) => payload.userCode === userCode)[0]?.[1].payload;
      },
      async consume(id: string) {
        const payload = find(id);
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id: string) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId: string) {
        for (const [name, entry] of store) if (entry.payload.grantId === grantId) store.delete(name);
      },
    };
  };
}

export async function startOidcStandIn(options: OidcStandInOptions): Promise<OidcStandIn> {
  const requests: RecordedRequest[] = [];
  let allowedUris = [...(options.redirectUris ?? [])];
  let mode: Misbehaviour | null = null;
  let provider: Provider | undefined;
  const bySub = new Map(Object.values(options.accounts).map((account) => [account.sub, account]));

  const server = createServer((req, res) => {
    if (!provider) return sendHtml(res, 503, 'starting');
    void handle(provider, req, res).catch((error: unknown) => {
      if (!res.headersSent) sendHtml(res, 500, `<p>${String(error)}</p>`);
      else res.destroy();
    });
  });
  const url = await listen(server);
  const key = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(key.privateKey)), kid: 'standin-rs256', alg: 'RS256', use: 'sig' };

  provider = new Provider(url, {
    adapter: memoryAdapter(new Map()),
    jwks: { keys: [jwk] },
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        // Placeholder: redirect URIs are checked by the replaced redirectUriAllowed below.
        redirect_uris: ['http://127.0.0.1/callback'],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    pkce: { required: () => true },
    responseTypes: ['code'],
    scopes: ['openid', 'email', 'profile'],
    claims: {
      // amr rides with openid so that an account's amr reaches the id_token whenever it has one.
      openid: ['sub', 'amr'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    // The scope's claims go into the id_token itself, not only to userinfo (Core §5.4).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    async findAccount(_ctx: unknown, sub: string) {
      const account = bySub.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          const { amr: _amr, ...claims } = account;
          return claims;
        },
      };
    },
    async renderError(ctx: ProviderContext, out: Record<string, string>) {
      ctx.type = 'html';
      ctx.body = `<html><body><p>${out.error}</p><p>${out.error_description ?? ''}</p></body></html>`;
    },
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
      Grant: 600,
      RefreshToken: 600,
    },
  });
  provider.Client.prototype.redirectUriAllowed = (value: string) => redirectUriAllowed(value, allowedUris);
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.headers[HOP_HEADER]) return;
    const params = ctx.method === 'POST' ? (ctx.oidc?.body ?? {}) : ctx.query;
    requests.push({
      method: ctx.method,
      path: ctx.path,
      params: Object.fromEntries(Object.entries(params).map(([name, value]) => [name, String(value)])),
      headers: { ...(ctx.headers as RecordedRequest['headers']) },
    });
  });
  const callback = provider.callback();

  const handle = async (op: Provider, req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', url).pathname;
    if (mode === 'garbage' && req.method === 'POST' && path === '/token') {
      const params = Object.fromEntries(new URLSearchParams(await readBody(req)));
      requests.push({ method: 'POST', path, params, headers: { ...req.headers } });
      return sendGarbage(res);
    }
    if (path.startsWith('/interaction/')) return interact(op, req, res);
    if (req.method === 'GET' && path === '/auth' && !req.headers[HOP_HEADER]) return walk(req, res);
    await callback(req, res);
  };

  /** Answers oidc-provider's login, then consent, prompt for `nextAccount`. */
  const interact = async (op: Provider, req: IncomingMessage, res: ServerResponse) => {
    const details = await op.interactionDetails(req, res);
    const account = options.accounts[standIn.nextAccount];
    if (mode === 'error' || !account) {
      const error_description = account
        ? 'The person declined.'
        : `no stand-in account ${standIn.nextAccount}`;
      return op.interactionFinished(req, res, { error: 'access_denied', error_description });
    }
    if (details.prompt.name === 'login')
      return op.interactionFinished(req, res, { login: { accountId: account.sub, amr: account.amr } });
    const grant = new op.Grant({ accountId: account.sub, clientId: String(details.params.client_id) });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = details.prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {}))
      grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    return op.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  };

  /**
   * Follows oidc-provider's own redirects (authorization → interaction → resume) with their
   * cookies, and answers the caller with the first one that leaves the stand-in: the redirect to
   * redirect_uri. Any other answer (an error page) is passed on as it is.
   */
  const walk = async (req: IncomingMessage, res: ServerResponse) => {
    let next = new URL(req.url ?? '/', url);
    const cookies = new Map<string, string>();
    for (let hop = 0; hop < 10; hop++) {
      const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const answer = await fetch(next, { redirect: 'manual', headers: { [HOP_HEADER]: '1', cookie } });
      for (const line of answer.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = answer.headers.get('location');
      if (location && answer.status >= 300 && answer.status < 400) {
        const target = new URL(location, next);
        if (target.origin === url) {
          next = target;
          continue;
        }
        requests.push({ method: 'GET', path: '/auth', params: queryOf(req), headers: { ...req.headers } });
        res.writeHead(303, { location: target.href });
        return res.end();
      }
      requests.push({ method: 'GET', path: '/auth', params: queryOf(req), headers: { ...req.headers } });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/html' });
      return res.end(await answer.text());
    }
    sendHtml(res, 508, 'too many redirects');
  };

  const queryOf = (req: IncomingMessage) =>
    Object.fromEntries(new URL(req.url ?? '/', url).searchParams) as Record<string, string>;

  const standIn: OidcStandIn = {
    url,
    requests,
    nextAccount: options.account ?? Object.keys(options.accounts)[0] ?? '',
    misbehave(value) {
      mode = value;
    },
    setRedirectUris(uris) {
      allowedUris = [...uris];
    },
    stop: () => stopServer(server),
  };
  return standIn;
}
