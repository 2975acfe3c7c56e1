import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  clientCredentials,
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
 * GitHub's OAuth app sign-in, shaped as GitHub documents it ("Authorizing OAuth apps"), with its
 * web flow and REST API on one origin: configure the service with web base = API base = url.
 * Like GitHub: token errors are 200 with an `error` member, the token answer is JSON only when
 * asked by Accept, the granted scope is comma-separated, codes live ten minutes and are single
 * use, PKCE (S256) is checked when a challenge was sent, and /user/emails needs the user:email
 * (or user) scope. Redirect URIs: as in shared.ts's redirectUriAllowed.
 */

export interface GithubAccount {
  /** GitHub's stable numeric account id. */
  id: number;
  login: string;
  name?: string;
  /** The public address shown on the profile; null or absent when kept private. */
  email?: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface GithubStandInOptions {
  clientId: string;
  clientSecret: string;
  redirectUris?: string[];
  /** By login; `nextAccount` names one of them. */
  accounts: Record<string, GithubAccount>;
  /** The account approved first; the first of `accounts` when not given. */
  account?: string;
}

export interface GithubStandIn extends StandInHandle {
  /** Replaces the accepted redirect URIs; [] accepts any loopback http URI again. */
  setRedirectUris(uris: string[]): void;
}

interface IssuedCode {
  /** The key of `accounts`. */
  account: string;
  redirectUri: string;
  challenge: string | undefined;
  scope: string;
  expiresAt: number;
}

const DOCS =
  'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';

export async function startGithubStandIn(options: GithubStandInOptions): Promise<GithubStandIn> {
  const requests: RecordedRequest[] = [];
  let allowedUris = [...(options.redirectUris ?? [])];
  let mode: Misbehaviour | null = null;
  const codes = new Map<string, IssuedCode>();
  const tokens = new Map<string, { account: string; scope: string }>();

  const authorize = (res: ServerResponse, query: Record<string, string>) => {
    if (query.client_id !== options.clientId) return sendHtml(res, 404, '<p>Not Found</p>');
    const redirectUri = query.redirect_uri;
    if (!redirectUri || !redirectUriAllowed(redirectUri, allowedUris))
      return sendHtml(res, 400, '<p>The redirect_uri is not associated with this application.</p>');
    const account = options.accounts[standIn.nextAccount];
    if (mode === 'error' || !account)
      return redirect(
        res,
        withQuery(redirectUri, {
          error: 'access_denied',
          error_description: account
            ? 'The user has denied your application access.'
            : `no stand-in account ${standIn.nextAccount}`,
          error_uri:
            'https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied',
          state: query.state,
        }),
      );
    const challenge = query.code_challenge;
    if (challenge !== undefined && query.code_challenge_method !== 'S256')
      return sendHtml(res, 400, '<p>code_challenge_method must be S256</p>');
    const code = randomToken().slice(0, 20);
    codes.set(code, {
      account: standIn.nextAccount,
      redirectUri,
      challenge,
      scope: (query.scope ?? '')
        .split(/[\s,]+/)
        .filter(Boolean)
        .join(','),
      expiresAt: Date.now() + 10 * 60_000,
    });
    redirect(res, withQuery(redirectUri, { code, state: query.state }));
  };

  const accessToken = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => {
    if (mode === 'garbage') return sendGarbage(res);
    const answer = (body: Record<string, string>) => {
      if ((req.headers.accept ?? '').includes('application/json')) return sendJson(res, 200, body);
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
      res.end(new URLSearchParams(body).toString());
    };
    const fail = (error: string, error_description: string) =>
      answer({ error, error_description, error_uri: `${DOCS}#${error.replaceAll('_', '-')}` });
    const client = clientCredentials(req, params);
    if (client.id !== options.clientId || client.secret !== options.clientSecret)
      return fail('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    const code = params.code === undefined ? undefined : codes.get(params.code);
    if (params.code !== undefined) codes.delete(params.code);
    if (!code || code.expiresAt < Date.now() || !pkceMatches(code.challenge, params.code_verifier))
      return fail('bad_verification_code', 'The code passed is incorrect or expired.');
    if (params.redirect_uri !== undefined && params.redirect_uri !== code.redirectUri)
      return fail(
        'redirect_uri_mismatch',
        'The redirect_uri MUST match the registered callback URL for this application.',
      );
    const token = randomToken('gho_');
    tokens.set(token, { account: code.account, scope: code.scope });
    answer({ access_token: token, token_type: 'bearer', scope: code.scope });
  };

  const api = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const header = req.headers.authorization ?? '';
    const match = /^(?:bearer|token) (.+)$/i.exec(header);
    const grant = match?.[1] === undefined ? undefined : tokens.get(match[1]);
    const account = grant && options.accounts[grant.account];
    if (!grant || !account)
      return sendJson(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    res.setHeader('x-oauth-scopes', grant.scope.replaceAll(',', ', '));
    if (path === '/user')
      return sendJson(res, 200, {
        login: account.login,
        id: account.id,
        node_id: `U_${account.id}`,
        avatar_url: `${url}/avatars/u/${account.id}`,
        type: 'User',
        name: account.name ?? null,
        email: account.email ?? null,
      });
    const scopes = grant.scope.split(',');
    if (!scopes.includes('user:email') && !scopes.includes('user'))
      return sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    sendJson(
      res,
      200,
      account.emails.map((each) => ({
        ...each,
        visibility: each.email === account.email ? 'public' : each.primary ? 'private' : null,
      })),
    );
  };

  const server = createServer((req, res) => {
    void (async () => {
      const target = new URL(req.url ?? '/', url);
      const body = req.method === 'POST' ? await readBody(req) : '';
      const params =
        req.method === 'POST' ? parseBody(req, body) : Object.fromEntries(target.searchParams.entries());
      requests.push({
        method: req.method ?? 'GET',
        path: target.pathname,
        params,
        headers: { ...req.headers },
      });
      const route = `${req.method} ${target.pathname}`;
      if (route === 'GET /login/oauth/authorize') return authorize(res, params);
      if (route === 'POST /login/oauth/access_token') return accessToken(req, res, params);
      if (route === 'GET /user' || route === 'GET /user/emails') return api(req, res, target.pathname);
      sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    })().catch(() => res.destroy());
  });
  const url = await listen(server);

  const standIn: GithubStandIn = {
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
