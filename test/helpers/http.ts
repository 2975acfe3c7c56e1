// Requests as a site's backend sends them: client authentication, form bodies, the code exchange.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestClient } from './factories.js';

export function basic(client: TestClient): string {
  const encode = (value: string) => encodeURIComponent(value);
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
}

/** The authorization request a site sends the browser to (RFC 6749 §4.1.1), with `params` on top. */
export function authorizeUrl(
  client: Pick<TestClient, 'clientId' | 'redirectUri'>,
  params: Record<string, string> = {},
): string {
  const query = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    state: 'st-1',
    ...params,
  });
  return `/api/v1/oauth/authorize?${query}`;
}

export function form(params: Record<string, string | undefined>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) body.append(name, value);
  return body.toString();
}

export function postForm(
  app: FastifyInstance,
  url: string,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form(params),
  });
}

export function exchangeCode(
  app: FastifyInstance,
  client: TestClient,
  code: string,
  extra: Record<string, string | undefined> = {},
): Promise<LightMyRequestResponse> {
  return postForm(
    app,
    '/api/v1/oauth/token',
    { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, ...extra },
    { authorization: basic(client) },
  );
}
