import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, InvalidToken, oauthErrorText } from '../../src/lib/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeClient, makeUser, type TestClient } from '../helpers/factories.js';
import { basic, postForm } from '../helpers/http.js';

/** RFC 6749 §5.2: error and error_description are %x20-21 / %x23-5B / %x5D-7E. */
const OAUTH_TEXT = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;
const HOSTILE = 'a"\\b‹é§–\u0007';

let t: TestApp;
let client: TestClient;
beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  await makeUser(t);
});
afterAll(() => t.close());

describe('oauthErrorText', () => {
  it('keeps allowed text as it is and replaces everything else', () => {
    expect(oauthErrorText('Plain text: 43-128 (RFC 7636).')).toBe('Plain text: 43-128 (RFC 7636).');
    expect(oauthErrorText('RFC 6749 §3.2 – "x" \\ é')).toBe("RFC 6749 section 3.2 - 'x' / ?");
  });

  it('is applied to every ApiError, so no text can leave with a forbidden character', () => {
    const error = new ApiError(400, 'invalid_request', HOSTILE);
    expect(error.description).toMatch(OAUTH_TEXT);
    expect(error.toBody().error_description).toMatch(OAUTH_TEXT);
    const token = new InvalidToken(HOSTILE);
    expect(token.headers['www-authenticate']).toMatch(/^[\x20-\x7E]+$/);
    expect(token.headers['www-authenticate']).toMatch(/error_description="[^"]*"$/);
  });
});

describe('error texts never echo the request, and stay within RFC 6749 §5.2', () => {
  it('token: an unsupported grant_type', async () => {
    const res = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: HOSTILE },
      { authorization: basic(client) },
    );
    expect(res.statusCode).toBe(400);
    const body = res.json() as { error: string; error_description: string };
    expect(body.error).toBe('unsupported_grant_type');
    expect(body.error_description).toMatch(OAUTH_TEXT);
    expect(body.error_description).not.toContain('a"');
    expect(body.error_description).not.toContain("a'");
  });

  it('token: a repeated parameter and the wrong content type', async () => {
    const repeated = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=x&${encodeURIComponent(HOSTILE)}=1&${encodeURIComponent(HOSTILE)}=2`,
    });
    expect(repeated.statusCode).toBe(400);
    expect((repeated.json() as { error_description: string }).error_description).toMatch(OAUTH_TEXT);
    expect(repeated.body).not.toContain('‹');
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { authorization: basic(client), 'content-type': 'application/json' },
      payload: '{}',
    });
    expect((json.json() as { error_description: string }).error_description).toMatch(OAUTH_TEXT);
  });

  it('token: refresh with a wider or odd scope and a malformed code_verifier', async () => {
    for (const params of [
      { grant_type: 'refresh_token', refresh_token: 'rt_x', scope: `openid ${HOSTILE}` },
      {
        grant_type: 'authorization_code',
        code: 'ac_x',
        redirect_uri: client.redirectUri,
        code_verifier: 'short',
      },
    ]) {
      const res = await postForm(t.app, '/api/v1/oauth/token', params, { authorization: basic(client) });
      expect(res.statusCode).toBe(400);
      const body = res.json() as { error_description: string };
      expect(body.error_description).toMatch(OAUTH_TEXT);
    }
  });

  it('authorize: an unknown scope and prompt come back without the values sent', async () => {
    const changes: Array<Record<string, string>> = [{ scope: `openid ${HOSTILE}` }, { prompt: HOSTILE }];
    for (const change of changes) {
      const query = new URLSearchParams({
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        response_type: 'code',
        state: 's',
        ...change,
      });
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/oauth/authorize?${query}` });
      expect(res.statusCode).toBe(302);
      const location = new URL(String(res.headers.location));
      const description = location.searchParams.get('error_description') ?? '';
      expect(description).toMatch(OAUTH_TEXT);
      expect(description).not.toMatch(/a["']/);
      expect(location.searchParams.get('error')).toMatch(OAUTH_TEXT);
    }
  });

  it('an unknown path is not repeated in the 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/%E2%80%B9nothing"here' });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('nothing');
    expect((res.json() as { error_description: string }).error_description).toMatch(OAUTH_TEXT);
  });

  it('a validation error names fields of our own, not keys the caller made up', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/users/search?q=${'x'.repeat(65)}`,
    });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { error_description: string }).error_description).toMatch(OAUTH_TEXT);
  });
});
