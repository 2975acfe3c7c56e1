import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/**
 * Asserts the contract's error: status, `{ok:false, error, error_description}`,
 * JSON content type, and the headers each status requires.
 */
export function expectApiError(res: LightMyRequestResponse, status: number, error: string): void {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  expect(body).toEqual({ ok: false, error, error_description: expect.any(String) });
  expect((body.error_description as string).length).toBeGreaterThan(5);
  // Never a stack trace, SQL text or driver message.
  expect(res.body).not.toMatch(/\bat .+\.(ts|js):\d+|select |insert |update |ECONN|node_modules/i);
  if (status === 401 && error === 'invalid_client')
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
  const dpopError = error === 'invalid_dpop_proof' || error === 'use_dpop_nonce';
  // RFC 9449 §7.1: a refused proof at a resource is answered with the DPoP challenge alone.
  if (status === 401 && dpopError) {
    expect(res.headers['www-authenticate']).toMatch(new RegExp(`^DPoP realm="idp", error="${error}"`));
    expect(res.headers['www-authenticate']).toContain('algs="ES256 EdDSA Ed25519"');
  }
  if (status === 401 && error !== 'invalid_client' && !dpopError) {
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="/);
    if (error === 'invalid_token') expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    else expect(res.headers['www-authenticate']).not.toContain('error=');
  }
  if (status === 405) expect(res.headers.allow).toBeTruthy();
  if (status === 429) expect(res.headers['retry-after']).toBeTruthy();
}
