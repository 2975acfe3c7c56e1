import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { currentDpopNonce, isValidDpopNonce } from '../../../src/modules/dpop/dpop-nonce.js';
import { DpopProofRefused, verifyDpopProof } from '../../../src/modules/dpop/dpop-proof.js';
import { testConfig } from '../../helpers/app.js';
import { dpopKey, dpopProof, type ProofOptions } from '../../helpers/dpop.js';

/* The checks of RFC 9449 §4.3 that need no state: the proof alone against its request. */

const clock = fixedClock('2026-06-01T12:00:00Z');
const target = { config: testConfig(), clock };
const TOKEN_URL = 'http://localhost:3000/api/v1/oauth/token';
const now = clock.now();

async function check(proof: string | string[] | undefined, accessTokenHash?: string) {
  return verifyDpopProof(proof, {
    method: 'POST',
    url: TOKEN_URL,
    now,
    ...(accessTokenHash ? { accessTokenHash } : {}),
  });
}

async function refusal(options: ProofOptions, accessTokenHash?: string): Promise<string> {
  const key = await dpopKey();
  const proof = await dpopProof(target, key, options);
  const error = await check(proof, accessTokenHash).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DpopProofRefused);
  return (error as Error).message;
}

describe('verifyDpopProof', () => {
  it('accepts ES256 and EdDSA proofs and answers the RFC 7638 thumbprint of their key', async () => {
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const key = await dpopKey(alg);
      const proof = await dpopProof(target, key, { jti: `jti-${alg}` });
      expect(await check(proof)).toEqual({
        jkt: key.jkt,
        jti: `jti-${alg}`,
        iat: now.getTime() / 1000,
        nonce: currentDpopNonce(target.config.COOKIE_SECRET, now),
        keepKey: expect.any(Function),
      });
    }
  });

  it('compares htu without query and fragment, after normalizing scheme, host and port', async () => {
    const key = await dpopKey();
    for (const htu of [`${TOKEN_URL}?a=1`, `${TOKEN_URL}#x`, 'HTTP://LOCALHOST:3000/api/v1/oauth/token']) {
      await expect(check(await dpopProof(target, key, { htu }))).resolves.toMatchObject({ jkt: key.jkt });
    }
  });

  it('refuses a missing header, several headers, and what is not a JWT', async () => {
    const proof = await dpopProof(target, await dpopKey());
    for (const header of [undefined, [proof, proof], `${proof}, ${proof}`, 'not-a-jwt', 'a.b.c']) {
      await expect(check(header)).rejects.toBeInstanceOf(DpopProofRefused);
    }
  });

  it('refuses another typ, an HMAC, RSA or unsigned proof, and a private key in the header', async () => {
    expect(await refusal({ typ: 'JWT' })).toMatch(/typ dpop\+jwt/);
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const rsa = await new SignJWT({ htm: 'POST', htu: TOKEN_URL, iat: now.getTime() / 1000, jti: 'r' })
      .setProtectedHeader({ alg: 'RS256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
    await expect(check(rsa)).rejects.toThrow(/ES256 or EdDSA/);
    const hmac = await new SignJWT({ htm: 'POST', htu: TOKEN_URL, iat: now.getTime() / 1000, jti: 'h' })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: (await dpopKey()).publicJwk })
      .sign(new TextEncoder().encode('a secret of thirty-two bytes!!!!'));
    await expect(check(hmac)).rejects.toThrow(/ES256 or EdDSA/);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: (await dpopKey()).publicJwk })).toString('base64url')}.${Buffer.from(JSON.stringify({ htm: 'POST', htu: TOKEN_URL, iat: now.getTime() / 1000, jti: 'n' })).toString('base64url')}.`;
    await expect(check(unsigned)).rejects.toThrow(/ES256 or EdDSA/);
    const key = await dpopKey();
    const privateJwk = await exportJWK(key.privateKey);
    expect(await refusal({ header: { jwk: privateJwk } })).toMatch(/public key/);
  });

  it('refuses a proof signed by another key than its jwk header names', async () => {
    const other = await dpopKey();
    expect(await refusal({ header: { jwk: other.publicJwk } })).toMatch(/key of its jwk header/);
  });

  it('checks the signature of every proof of a key it has seen, and takes only P-256 and Ed25519 keys', async () => {
    const key = await dpopKey();
    expect((await check(await dpopProof(target, key, { jti: 'first' }))).jkt).toBe(key.jkt);
    // The key is known now; a proof naming it but signed by another key is still refused.
    const forger = await dpopKey();
    const forged = await dpopProof(target, forger, { jti: 'forged', header: { jwk: key.publicJwk } });
    await expect(check(forged)).rejects.toThrow(/key of its jwk header/);
    expect((await check(await dpopProof(target, key, { jti: 'second' }))).jkt).toBe(key.jkt);
    // An ES256 proof whose jwk is on another curve is no proof of ours.
    const p384 = await generateKeyPair('ES384');
    const otherCurve = await dpopProof(target, key, {
      jti: 'p384',
      header: { jwk: await exportJWK(p384.publicKey) },
    });
    await expect(check(otherCurve)).rejects.toThrow(DpopProofRefused);
  });

  it('refuses another method or URL, a stale or future iat, and a missing or overlong jti', async () => {
    expect(await refusal({ htm: 'GET' })).toMatch(/htm must be POST/);
    expect(await refusal({ htu: 'http://localhost:3000/api/v1/oauth/userinfo' })).toMatch(/htu must be/);
    expect(await refusal({ htu: 'https://localhost:3000/api/v1/oauth/token' })).toMatch(/htu must be/);
    expect(await refusal({ htu: 'not a url' })).toMatch(/htu must be/);
    const seconds = now.getTime() / 1000;
    expect(await refusal({ iat: seconds - 301 })).toMatch(/too old/);
    expect(await refusal({ iat: seconds + 61 })).toMatch(/too old or from the future/);
    expect(await refusal({ jti: null })).toMatch(/jti/);
    expect(await refusal({ jti: 'x'.repeat(257) })).toMatch(/jti/);
  });

  it('checks ath against the access token on resource requests', async () => {
    const key = await dpopKey();
    const hash = hashSecret('at_the-token');
    const good = await dpopProof(target, key, { accessToken: 'at_the-token' });
    await expect(check(good, hash)).resolves.toMatchObject({ jkt: key.jkt });
    expect(await refusal({ accessToken: 'at_another-token' }, hash)).toMatch(/ath/);
    expect(await refusal({}, hash)).toMatch(/ath/);
  });
});

describe('DPoP nonces', () => {
  const secret = target.config.COOKIE_SECRET;

  it('accepts the nonce of the current and of the previous 5-minute window only', () => {
    const at = new Date('2026-06-01T12:00:00Z');
    const nonce = currentDpopNonce(secret, at);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(isValidDpopNonce(secret, nonce, new Date(at.getTime() + 4 * 60_000))).toBe(true);
    expect(isValidDpopNonce(secret, nonce, new Date(at.getTime() + 9 * 60_000))).toBe(true);
    expect(isValidDpopNonce(secret, nonce, new Date(at.getTime() + 10 * 60_000))).toBe(false);
    expect(currentDpopNonce(secret, new Date(at.getTime() + 5 * 60_000))).not.toBe(nonce);
  });

  it('is the same on every instance with the same secret, and another with another secret', () => {
    const at = new Date('2026-06-01T12:00:00Z');
    expect(currentDpopNonce(secret, at)).toBe(currentDpopNonce(secret, at));
    const other = currentDpopNonce('another cookie secret of enough length', at);
    expect(isValidDpopNonce(secret, other, at)).toBe(false);
    expect(isValidDpopNonce(secret, '', at)).toBe(false);
  });
});
