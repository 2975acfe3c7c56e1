import type { KeyObject } from 'node:crypto';
import type { CryptoKey } from 'jose';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import {
  DEFAULT_SIGNING_ALGORITHM,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from '../../lib/signing-algorithms.js';
import {
  type GeneratedKey,
  generateKeyMaterial,
  importPrivateKey,
  type PublicJwk,
  publicJwkFor,
} from './key-material.js';
import {
  findKey,
  findSigningKey,
  insertSigningKey,
  listAllKeys,
  listPublishedKeys,
  lockSigningKeys,
  retireKey,
  type SigningKey,
} from './keys.repository.js';

export type { PublicJwk } from './key-material.js';

// id_token signing keys live in the database, so that every instance signs
// with the same keys and publishes the same JWKS. Each algorithm has its own keys: the newest of
// an algorithm not retired signs with it; every key not retired verifies (is in the JWKS).

/** A key as the operator sees it; never the private part. */
export interface SigningKeyView {
  kid: string;
  algorithm: SigningAlgorithm;
  created_at: string;
  retired_at: string | null;
  /** True for the one key of its algorithm that signs new id_tokens. */
  signing: boolean;
}

/** The stored public JWK (jsonb: an object on both drivers; a string is tolerated). */
function publicJwkOf(row: Pick<SigningKey, 'kid' | 'algorithm' | 'publicJwk'>): PublicJwk {
  const stored = typeof row.publicJwk === 'string' ? JSON.parse(row.publicJwk) : row.publicJwk;
  return publicJwkFor(row.kid, row.algorithm, stored);
}

function toInsertable(key: GeneratedKey, createdAt: Date) {
  return {
    kid: key.kid,
    algorithm: key.algorithm,
    privateKeyPem: key.privateKeyPem,
    publicJwk: JSON.stringify(key.publicJwk),
    createdAt,
  };
}

/**
 * Makes sure every algorithm has a signing key, creating those missing, and returns the current
 * key of each. Safe when several instances start at once: keys are generated outside the lock (an
 * RSA key takes tens of milliseconds), then inserted under the table lock only for an algorithm
 * that still has none, so every instance ends up with the same single key per algorithm. `db` may
 * be a transaction: the work then joins it.
 */
export async function ensureSigningKeys(
  db: Kysely<Database>,
  ctx: Context,
  algorithms: readonly SigningAlgorithm[] = SIGNING_ALGORITHMS,
): Promise<Map<SigningAlgorithm, SigningKey>> {
  const current = new Map<SigningAlgorithm, SigningKey>();
  for (const alg of algorithms) {
    const found = await findSigningKey(db, alg);
    if (found) current.set(alg, found);
  }
  const missing = algorithms.filter((alg) => !current.has(alg));
  if (missing.length === 0) return current;
  const generated = await Promise.all(missing.map(generateKeyMaterial));
  // No cache to invalidate: with no key of an algorithm in the table, no instance holds its signer.
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    for (const key of generated) {
      // Another instance won the race: its key signs, ours is dropped unused.
      const winner = await findSigningKey(trx, key.algorithm);
      current.set(key.algorithm, winner ?? (await insertSigningKey(trx, toInsertable(key, ctx.clock.now()))));
    }
    return current;
  });
}

/** `ensureSigningKeys` for one algorithm: its current key, made if there is none. */
export async function ensureSigningKey(
  db: Kysely<Database>,
  ctx: Context,
  alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
): Promise<SigningKey> {
  const key = (await ensureSigningKeys(db, ctx, [alg])).get(alg);
  if (!key) throw new Error(`no ${alg} signing key after ensuring one`);
  return key;
}

/**
 * Adds a new key of `alg`, which signs with that algorithm from then on; its older keys that are
 * not retired keep verifying, and other algorithms are untouched. The new key's `created_at` is
 * later than that of every other key of `alg`, also when the clock stands still (a test clock) or
 * lags behind another instance's, so it is the newest on every instance.
 */
export async function rotateSigningKey(
  db: Kysely<Database>,
  ctx: Context,
  alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
  /** Runs in the rotation's transaction (the console records its audit event there). */
  alongside?: (trx: Kysely<Database>, key: SigningKey) => Promise<void>,
): Promise<SigningKey> {
  const generated = await generateKeyMaterial(alg);
  const row = await inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const newest = await findSigningKey(trx, alg);
    const now = ctx.clock.now();
    const createdAt =
      newest && newest.createdAt.getTime() >= now.getTime() ? new Date(newest.createdAt.getTime() + 1) : now;
    const key = await insertSigningKey(trx, toInsertable(generated, createdAt));
    await alongside?.(trx, key);
    return key;
  });
  invalidateSigningKeyCache(db, alg);
  return row;
}

/**
 * Retires a key of any algorithm: it is no longer published, so id_tokens it signed stop
 * verifying. The key that signs with its algorithm cannot be retired (rotate that algorithm
 * first), so each algorithm always has a signer.
 */
export async function retireSigningKey(db: Kysely<Database>, ctx: Context, kid: string): Promise<SigningKey> {
  const row = await inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const key = await findKey(trx, kid);
    if (!key) throw new NotFound(`no signing key with kid "${kid}"`);
    if (key.retiredAt) return key;
    if ((await findSigningKey(trx, key.algorithm))?.kid === kid) {
      throw new InvalidRequest(
        `key "${kid}" signs new ${key.algorithm} id_tokens; rotate first (idp keys rotate --alg ${key.algorithm}), then retire it`,
      );
    }
    return (await retireKey(trx, kid, ctx.clock.now())) ?? key;
  });
  invalidateSigningKeyCache(db, row.algorithm);
  return row;
}

/** Every key for the operator, newest first, without private parts. */
export async function listSigningKeys(db: Kysely<Database>): Promise<SigningKeyView[]> {
  const rows = await listAllKeys(db);
  const signers = new Set<string>();
  for (const alg of SIGNING_ALGORITHMS) {
    const signer = rows.find((row) => row.retiredAt === null && row.algorithm === alg);
    if (signer) signers.add(signer.kid);
  }
  return rows.map((row) => ({
    kid: row.kid,
    algorithm: row.algorithm,
    created_at: row.createdAt.toISOString(),
    retired_at: row.retiredAt ? row.retiredAt.toISOString() : null,
    signing: signers.has(row.kid),
  }));
}

/**
 * The public JWK Set: every key that is not retired (RFC 7517 §5), RS256 first, then ES256 and
 * EdDSA, newest first within each: a client that predates the other algorithms and takes the
 * first key still finds an RS256 one. Read fresh on every request, never cached: a key rotated in
 * elsewhere must be published here before any instance signs with it, or a client would meet a
 * `kid` this JWKS does not list.
 */
export async function readJwks(db: Kysely<Database>, ctx: Context): Promise<{ keys: PublicJwk[] }> {
  let rows = await listPublishedKeys(db);
  if (!SIGNING_ALGORITHMS.every((alg) => rows.some((row) => row.algorithm === alg))) {
    await ensureSigningKeys(db, ctx);
    rows = await listPublishedKeys(db);
  }
  const rank = (alg: SigningAlgorithm) => SIGNING_ALGORITHMS.indexOf(alg);
  // Array.prototype.sort is stable: newest first stays within an algorithm.
  rows.sort((a, b) => rank(a.algorithm) - rank(b.algorithm));
  return { keys: rows.map(publicJwkOf) };
}

/** The key that signs with one algorithm, imported and ready. */
export interface Signer {
  kid: string;
  alg: SigningAlgorithm;
  /** For jose. */
  key: CryptoKey;
  /** The same key for node:crypto, which signs the id_tokens (src/lib/compact-jws.ts). */
  keyObject: KeyObject;
}

/** How long an instance keeps its signer before it looks for a key rotated by another instance. */
export const SIGNER_TTL_MS = 60_000;

interface CachedSigner {
  loading: Promise<Signer>;
  loadedAt: number;
  generation: number;
}

/**
 * Which key signs with each algorithm, for one database, cached so that signing costs no query.
 * An algorithm's signer is reloaded after `ttlMs` (a rotation elsewhere is seen within a minute)
 * and at once after a rotation of that algorithm in this process; the key it held keeps verifying
 * meanwhile, as a rotation never retires the previous key.
 */
export class SigningKeyCache {
  private readonly entries = new Map<SigningAlgorithm, CachedSigner>();
  private generation = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ctx: Context,
    private readonly options: { ttlMs?: number; monotonicNow?: () => number } = {},
  ) {}

  private now(): number {
    return this.options.monotonicNow ? this.options.monotonicNow() : performance.now();
  }

  /** The current signer of `alg`; loads it (creating its first key if needed) when missing or stale. */
  signer(alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM): Promise<Signer> {
    const ttl = this.options.ttlMs ?? SIGNER_TTL_MS;
    const cached = this.entries.get(alg);
    if (cached && this.now() - cached.loadedAt < ttl) return cached.loading;
    const entry: CachedSigner = {
      loading: loadSigner(this.db, this.ctx, alg),
      loadedAt: this.now(),
      generation: ++this.generation,
    };
    this.entries.set(alg, entry);
    // A failed load (database down) is not kept: the next call tries again.
    entry.loading.catch(() => {
      if (this.entries.get(alg)?.generation === entry.generation) this.entries.delete(alg);
    });
    return entry.loading;
  }

  /** Forgets the signer of `alg` (of every algorithm when none is named): the next id_token reads the table again. */
  invalidate(alg?: SigningAlgorithm): void {
    if (alg === undefined) this.entries.clear();
    else this.entries.delete(alg);
  }
}

async function loadSigner(db: Kysely<Database>, ctx: Context, alg: SigningAlgorithm): Promise<Signer> {
  const row = await ensureSigningKey(db, ctx, alg);
  return { kid: row.kid, alg, ...(await importPrivateKey(row)) };
}

/** One cache per database handle: the server's requests and its CLI commands share it. */
const caches = new WeakMap<Kysely<Database>, SigningKeyCache>();

function invalidateSigningKeyCache(db: Kysely<Database>, alg: SigningAlgorithm): void {
  caches.get(db)?.invalidate(alg);
}

/** The cache of a database handle (not of a transaction: see `currentSigner`). */
export function signingKeyCache(db: Kysely<Database>, ctx: Context): SigningKeyCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new SigningKeyCache(db, ctx);
    caches.set(db, cache);
  }
  return cache;
}

/**
 * The key that signs with `alg` now (RS256 unless named). Given the database handle, from the
 * process cache. Given a transaction (the token endpoint signs inside the one that consumes the
 * code), with one query in that transaction: a cache keyed by a short-lived transaction would never
 * hit, and a query on the root handle from inside a PGlite transaction would wait for it forever.
 */
export function currentSigner(
  db: Kysely<Database>,
  ctx: Context,
  alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
): Promise<Signer> {
  return db.isTransaction ? loadSigner(db, ctx, alg) : signingKeyCache(db, ctx).signer(alg);
}
