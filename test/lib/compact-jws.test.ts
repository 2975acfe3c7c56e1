import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { signCompactJwt } from '../../src/lib/compact-jws.js';
import type { SigningAlgorithm } from '../../src/lib/signing-algorithms.js';

/* id_tokens signed with node:crypto, checked by jose as every client library would. */

const keyPairs: Record<SigningAlgorithm, () => { privateKey: KeyObject; publicKey: KeyObject }> = {
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
};

describe('signCompactJwt', () => {
  for (const alg of Object.keys(keyPairs) as SigningAlgorithm[]) {
    it(`signs a JWT that jose verifies with the ${alg} public key, and only untampered`, async () => {
      const { privateKey, publicKey } = keyPairs[alg]();
      const claims = { iss: 'https://id.example', sub: '42', aud: 'pk_x', iat: 1_700_000_000, name: 'Zoë ✓' };
      const jwt = signCompactJwt({ alg, kid: 'kid-1', typ: 'JWT' }, claims, privateKey);

      expect(decodeProtectedHeader(jwt)).toEqual({ alg, kid: 'kid-1', typ: 'JWT' });
      const verified = await jwtVerify(jwt, publicKey, {
        algorithms: [alg],
        currentDate: new Date(1_700_000_000_000),
      });
      expect(verified.payload).toEqual(claims);

      const [header, payload, signature] = jwt.split('.') as [string, string, string];
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: '43' })).toString('base64url');
      await expect(jwtVerify(`${header}.${forged}.${signature}`, publicKey)).rejects.toThrow(/signature/);
      const other = keyPairs[alg]().publicKey;
      await expect(jwtVerify(`${header}.${payload}.${signature}`, other)).rejects.toThrow(/signature/);
    });
  }
});
