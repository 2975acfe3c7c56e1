import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';
import { initialToken, METADATA, type Registered } from './registration.fixture.js';

/*
 * The registration routes take bearer tokens, and are limited as bearer routes are (README "Rate
 * limits"): per token, and the refused tokens per IP, so initial and registration access tokens
 * cannot be guessed from one address.
 */

const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      RATE_LIMIT_BEARER_PER_MIN: '5',
      RATE_LIMIT_FAILED_AUTH_PER_MIN: '3',
      RATE_LIMIT_PUBLIC_PER_MIN: '100',
    },
  });
});
afterAll(() => t.close());

function send(method: 'POST' | 'GET', url: string, ip: string, token: string) {
  return t.app.inject({
    method,
    url,
    remoteAddress: ip,
    headers: {
      authorization: `Bearer ${token}`,
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { payload: JSON.stringify(METADATA) } : {}),
  });
}

describe('the registration routes under the rate limits', () => {
  it('refuse an address past the limit of refused initial access tokens, even with a good one', async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++)
      expectApiError(
        await send('POST', '/api/v1/oauth/register', ip, `rit_guess_${i}`),
        401,
        'invalid_token',
      );
    const token = await initialToken(t, { uses: 2 });
    expectApiError(await send('POST', '/api/v1/oauth/register', ip, token), 429, 'rate_limited');
    expect((await send('POST', '/api/v1/oauth/register', newIp(), token)).statusCode).toBe(201);
  });

  it('refuse an address past the limit of refused registration access tokens', async () => {
    const registered = (
      await send('POST', '/api/v1/oauth/register', newIp(), await initialToken(t))
    ).json() as Registered;
    const url = `/api/v1/oauth/register/${registered.client_id}`;
    const ip = newIp();
    for (let i = 0; i < 3; i++)
      expectApiError(await send('GET', url, ip, `rat_guess_${i}`), 401, 'invalid_token');
    expectApiError(await send('GET', url, ip, registered.registration_access_token), 429, 'rate_limited');
    expect((await send('GET', url, newIp(), registered.registration_access_token)).statusCode).toBe(200);
  });
});
