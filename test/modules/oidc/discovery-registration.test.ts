import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoveryDocument } from '../../../src/modules/oidc/discovery.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

/* Discovery names the RFC 7591 registration endpoint (RFC 8414 §2) unless registration is closed. */

const apps = new Map<string, TestApp>();
beforeAll(async () => {
  for (const mode of ['open', 'approval', 'closed'])
    apps.set(mode, await createTestApp({ env: { CLIENT_REGISTRATION: mode } }));
}, 180_000);
afterAll(() => Promise.all([...apps.values()].map((t) => t.close())));

async function discovered(mode: string): Promise<Record<string, unknown>> {
  const res = await (apps.get(mode) as TestApp).app.inject({
    method: 'GET',
    url: '/.well-known/openid-configuration',
  });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('registration_endpoint in discovery', () => {
  it.each(['open', 'approval'])('is listed under CLIENT_REGISTRATION=%s', async (mode) => {
    expect((await discovered(mode)).registration_endpoint).toBe(
      'http://localhost:3000/api/v1/oauth/register',
    );
  });

  it('is left out under CLIENT_REGISTRATION=closed', async () => {
    expect(await discovered('closed')).not.toHaveProperty('registration_endpoint');
  });

  it('keeps the path prefix of PUBLIC_URL', () => {
    expect(discoveryDocument('https://example.com/idp', { registration: true }).registration_endpoint).toBe(
      'https://example.com/idp/api/v1/oauth/register',
    );
    expect(discoveryDocument('https://example.com/idp')).not.toHaveProperty('registration_endpoint');
  });
});
