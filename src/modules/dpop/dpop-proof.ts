import { timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import { DPOP_ALGORITHMS } from '../../lib/errors.js';

/** RFC 9449 §4.3 step 11 leaves the window to the server: a proof is accepted this long after its `iat`… */
export const PROOF_MAX_AGE_SECONDS = 300;
/** …and this far ahead of our clock (a client's clock running fast). */
const PROOF_FUTURE_SKEW_SECONDS = 60;
/** A proof is a small JWT; anything much larger is not one of ours to parse. */
const MAX_PROOF_LENGTH = 8192;
/** RFC 9449 §4.2: `jti` is a unique identifier; bounded so a replay key stays small. */
const MAX_JTI_LENGTH = 256;

/** The proof keys kept imported, at most: a client signs every proof with one key. */
const KEY_CACHE_SIZE = 10_000;

interface ProofKey {
  key: Awaited<ReturnType<typeof importJWK>>;
  /** RFC 7638 thumbprint. */
  jkt: string;
}

/**
 * Proof keys already imported, by their public members and algorithm. Importing the `jwk` header
 * and hashing its thumbprint cost more than checking the signature (about 190 µs against 180 µs
 * on this machine), and a client sends every proof with the same key. A key is kept only once a
 * request it signed succeeded (`keepKey`), not when its proof merely verified: anyone can sign a
 * proof with a key made for it, and each kept key holds some 4.5 KB of OpenSSL's memory, outside
 * V8's heap (docs/performance.md "Memory"). The oldest goes first when the map is full.
 */
const proofKeys = new Map<string, ProofKey>();

/** How many proof keys are kept imported (for tests). */
export function keptProofKeyCount(): number {
  return proofKeys.size;
}

function keep(cacheKey: string, proofKey: ProofKey): void {
  if (proofKeys.has(cacheKey)) return;
  if (proofKeys.size >= KEY_CACHE_SIZE) proofKeys.delete(proofKeys.keys().next().value as string);
  proofKeys.set(cacheKey, proofKey);
}

/** The public members that make the key (RFC 7638 §3.2), for EC P-256 and OKP Ed25519 keys. */
function keyMembers(jwk: JWK): JWK | undefined {
  const { kty, crv, x, y } = jwk;
  if (typeof x !== 'string') return undefined;
  if (kty === 'EC' && crv === 'P-256' && typeof y === 'string') return { kty, crv, x, y };
  if (kty === 'OKP' && crv === 'Ed25519' && y === undefined) return { kty, crv, x };
  return undefined;
}

/** What the request the proof came with must match. */
export interface DpopProofExpectation {
  /** The HTTP method (`htm`). */
  method: string;
  /** The request URL under PUBLIC_URL, without query and fragment (`htu`). */
  url: string;
  now: Date;
  /** On a resource request: the SHA-256 (base64url) of the access token, which `ath` must equal. */
  accessTokenHash?: string;
}

/** A proof whose signature and claims hold. */
export interface VerifiedDpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key (RFC 9449 §6.1 `jkt`). */
  jkt: string;
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
  nonce: string | undefined;
  /** Keeps the proof's key imported for the next proofs: once the request it signed succeeded. */
  keepKey: () => void;
}

/** A proof that fails a check of RFC 9449 §4.3; the message says which, for the caller. */
export class DpopProofRefused extends Error {}

/** `htu` and the request URL compared as RFC 9449 §4.3 step 9 asks: normalized, without query and fragment. */
function sameUrl(htu: string, expected: string): boolean {
  try {
    const a = new URL(htu);
    const b = new URL(expected);
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3) except its nonce and its single use, which need the server's
 * state: exactly one `DPoP` header, a JWT of `typ` `dpop+jwt` signed with ES256 or Ed25519 (named
 * `EdDSA` or, RFC 9864, `Ed25519`) by the public key of its `jwk` header, `htm` and `htu` of this request, a recent `iat`, a `jti`, and on
 * a resource request `ath` of the access token.
 * @throws DpopProofRefused naming the check that failed.
 */
export async function verifyDpopProof(
  header: string | string[] | undefined,
  expect: DpopProofExpectation,
): Promise<VerifiedDpopProof> {
  // RFC 9449 §4.3 step 1: exactly one header (Node joins repeated ones with a comma, never in a JWT).
  if (typeof header !== 'string' || header.includes(',')) {
    throw new DpopProofRefused('Send exactly one DPoP header.');
  }
  if (header.length > MAX_PROOF_LENGTH) throw new DpopProofRefused('The DPoP proof is too long.');
  let jwk: JWK;
  let alg: string | undefined;
  try {
    const protectedHeader = decodeProtectedHeader(header);
    if (typeof protectedHeader.jwk !== 'object' || protectedHeader.jwk === null) {
      throw new DpopProofRefused('The DPoP proof has no jwk header.');
    }
    jwk = protectedHeader.jwk;
    alg = protectedHeader.alg;
  } catch (error) {
    if (error instanceof DpopProofRefused) throw error;
    throw new DpopProofRefused('The DPoP header is not a JWT.');
  }
  // RFC 9449 §4.3 step 7: the key must be public; a private member means a leaked key.
  if ('d' in jwk || 'k' in jwk)
    throw new DpopProofRefused('The jwk header of the DPoP proof must be a public key.');
  const refused = new DpopProofRefused(
    `The DPoP proof must be a JWT of typ dpop+jwt signed with ${DPOP_ALGORITHMS.join(' or ')} by the key of its jwk header.`,
  );
  const members = keyMembers(jwk);
  if (members === undefined || !(DPOP_ALGORITHMS as readonly string[]).includes(alg ?? '')) throw refused;
  const cacheKey = `${alg}.${members.crv}.${members.x}.${members.y ?? ''}`;
  let payload: Record<string, unknown>;
  let proofKey = proofKeys.get(cacheKey);
  try {
    const known = proofKey ?? {
      key: await importJWK(members, alg),
      jkt: await calculateJwkThumbprint(members, 'sha256'),
    };
    ({ payload } = await jwtVerify(header, known.key, {
      typ: 'dpop+jwt',
      algorithms: [...DPOP_ALGORITHMS],
      currentDate: expect.now,
    }));
    proofKey = known;
  } catch {
    throw refused;
  }
  const { htm, htu, iat, jti, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    throw new DpopProofRefused(`The DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters.`);
  }
  if (htm !== expect.method) throw new DpopProofRefused(`The DPoP proof's htm must be ${expect.method}.`);
  if (typeof htu !== 'string' || !sameUrl(htu, expect.url)) {
    throw new DpopProofRefused(`The DPoP proof's htu must be ${expect.url}.`);
  }
  const nowSeconds = Math.floor(expect.now.getTime() / 1000);
  if (
    typeof iat !== 'number' ||
    iat < nowSeconds - PROOF_MAX_AGE_SECONDS ||
    iat > nowSeconds + PROOF_FUTURE_SKEW_SECONDS
  ) {
    throw new DpopProofRefused(
      'The DPoP proof is too old or from the future: make a new one for each request.',
    );
  }
  // RFC 9449 §4.3 step 12, §7.1: ath is the base64url SHA-256 of the access token.
  if (
    expect.accessTokenHash !== undefined &&
    (typeof ath !== 'string' || !sameText(ath, expect.accessTokenHash))
  ) {
    throw new DpopProofRefused("The DPoP proof's ath must be the base64url SHA-256 of the access token.");
  }
  const verified = proofKey;
  return {
    jkt: verified.jkt,
    jti,
    iat,
    nonce: typeof nonce === 'string' ? nonce : undefined,
    keepKey: () => keep(cacheKey, verified),
  };
}
