import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  importPKCS8,
  type JWK,
} from 'jose';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import {
  findKey,
  findSigningKey,
  insertSigningKey,
  listAllKeys,
  listPublishedKeys,
  lockSigningKeys,
  retireKey,
  SIGNING_ALGORITHM,
  type SigningKey,
} from './keys.repository.js';

// id_token signing keys (CONTRACT.md §5) live in the database, so that every instance signs with
// the same key and publishes the same JWKS. The newest key not retired signs; every key not
// retired verifies (is published in the JWKS).

/** A public RSA key as the JWKS publishes it (RFC 7517 §4, RFC 7518 §6.3.1). */
export interface PublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: typeof SIGNING_ALGORITHM;
  use: 'sig';
}

/** A key as the operator sees it; never the private part. */
export interface SigningKeyView {
  kid: string;
  algorithm: string;
  created_at: string;
  retired_at: string | null;
  /** True for the one key that signs new id_tokens. */
  signing: boolean;
}

interface GeneratedKey {
  kid: string;
  privateKeyPem: string;
  publicJwk: PublicJwk;
}

/** A fresh RS256 key pair; the kid is its RFC 7638 thumbprint, so it names the key itself. */
async function generateSigningKey(): Promise<GeneratedKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, {
    extractable: true,
    modulusLength: 2048,
  });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    kid,
    privateKeyPem: await exportPKCS8(privateKey),
    publicJwk: {
      kty: 'RSA',
      n: jwk.n as string,
      e: jwk.e as string,
      kid,
      alg: SIGNING_ALGORITHM,
      use: 'sig',
    },
  };
}

/** The stored public JWK (jsonb: an object on both drivers; a string is tolerated). */
function publicJwkOf(row: Pick<SigningKey, 'kid' | 'publicJwk'>): PublicJwk {
  const stored = (typeof row.publicJwk === 'string' ? JSON.parse(row.publicJwk) : row.publicJwk) as JWK;
  return {
    kty: 'RSA',
    n: stored.n as string,
    e: stored.e as string,
    kid: row.kid,
    alg: SIGNING_ALGORITHM,
    use: 'sig',
  };
}

function toInsertable(key: GeneratedKey, createdAt: Date) {
  return {
    kid: key.kid,
    algorithm: SIGNING_ALGORITHM,
    privateKeyPem: key.privateKeyPem,
    publicJwk: JSON.stringify(key.publicJwk),
    createdAt,
  };
}

/**
 * Makes sure a signing key exists, creating the first one when there is none, and returns the
 * current signer. Safe when several instances start at once: the key is generated outside the
 * lock (it takes ~150 ms), then inserted under the table lock only if there is still no key, so
 * every instance ends up with the same single key. `db` may be a transaction: the work then joins it.
 */
export async function ensureSigningKey(db: Kysely<Database>, ctx: Context): Promise<SigningKey> {
  const existing = await findSigningKey(db);
  if (existing) return existing;
  const generated = await generateSigningKey();
  // No cache to invalidate: with no key in the table, no instance can hold a signer.
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    // Another instance won the race: its key signs, ours is dropped unused.
    return (await findSigningKey(trx)) ?? insertSigningKey(trx, toInsertable(generated, ctx.clock.now()));
  });
}

/**
 * Adds a new key, which signs from then on; older keys that are not retired keep verifying.
 * The new key's `created_at` is later than every other key's, also when the clock stands still
 * (a test clock) or lags behind another instance's, so it is the newest on every instance.
 */
export async function rotateSigningKey(db: Kysely<Database>, ctx: Context): Promise<SigningKey> {
  const generated = await generateSigningKey();
  const row = await inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const newest = await findSigningKey(trx);
    const now = ctx.clock.now();
    const createdAt =
      newest && newest.createdAt.getTime() >= now.getTime() ? new Date(newest.createdAt.getTime() + 1) : now;
    return insertSigningKey(trx, toInsertable(generated, createdAt));
  });
  invalidateSigningKeyCache(db);
  return row;
}

/**
 * Retires a key: it is no longer published, so id_tokens it signed stop verifying. The key that
 * signs cannot be retired (rotate first), so there is always a signer.
 */
export async function retireSigningKey(db: Kysely<Database>, ctx: Context, kid: string): Promise<SigningKey> {
  const row = await inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const key = await findKey(trx, kid);
    if (!key) throw new NotFound(`no signing key with kid "${kid}"`);
    if (key.retiredAt) return key;
    if ((await findSigningKey(trx))?.kid === kid) {
      throw new InvalidRequest(`key "${kid}" signs new id_tokens; rotate first, then retire it`);
    }
    return (await retireKey(trx, kid, ctx.clock.now())) ?? key;
  });
  invalidateSigningKeyCache(db);
  return row;
}

/** Every key for the operator, newest first, without private parts. */
export async function listSigningKeys(db: Kysely<Database>): Promise<SigningKeyView[]> {
  const rows = await listAllKeys(db);
  const signer = rows.find((row) => row.retiredAt === null && row.algorithm === SIGNING_ALGORITHM);
  return rows.map((row) => ({
    kid: row.kid,
    algorithm: row.algorithm,
    created_at: row.createdAt.toISOString(),
    retired_at: row.retiredAt ? row.retiredAt.toISOString() : null,
    signing: row.kid === signer?.kid,
  }));
}

/**
 * The public JWK Set: every key that is not retired, newest first (RFC 7517 §5). Read fresh on
 * every request, never cached: a key rotated in elsewhere must be published here before any
 * instance signs with it, or a client would meet a `kid` this JWKS does not list.
 */
export async function readJwks(db: Kysely<Database>, ctx: Context): Promise<{ keys: PublicJwk[] }> {
  let rows = await listPublishedKeys(db);
  if (rows.length === 0) {
    await ensureSigningKey(db, ctx);
    rows = await listPublishedKeys(db);
  }
  return { keys: rows.map(publicJwkOf) };
}

/** The key that signs, imported and ready. */
export interface Signer {
  kid: string;
  key: CryptoKey;
}

/**
 * Imported private keys by kid. The kid is the thumbprint of the public key, so one kid is one
 * key pair whichever database it was read from. Importing costs little, but not per request.
 */
const importedKeys = new Map<string, Promise<CryptoKey>>();
const MAX_IMPORTED_KEYS = 64;

function importSigningKey(row: SigningKey): Promise<CryptoKey> {
  let key = importedKeys.get(row.kid);
  if (!key) {
    if (importedKeys.size >= MAX_IMPORTED_KEYS) importedKeys.clear();
    key = importPKCS8(row.privateKeyPem, SIGNING_ALGORITHM);
    importedKeys.set(row.kid, key);
    key.catch(() => importedKeys.delete(row.kid));
  }
  return key;
}

/** How long an instance keeps its signer before it looks for a key rotated by another instance. */
export const SIGNER_TTL_MS = 60_000;

/**
 * Which key signs, for one database, cached so that signing costs no query. Reloaded after `ttlMs`
 * (a rotation elsewhere is seen within a minute) and at once after a rotation in this process; the
 * key it held keeps verifying meanwhile, as a rotation never retires the previous key.
 */
export class SigningKeyCache {
  private loading: Promise<Signer> | undefined;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private generation = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ctx: Context,
    private readonly options: { ttlMs?: number; monotonicNow?: () => number } = {},
  ) {}

  private now(): number {
    return this.options.monotonicNow ? this.options.monotonicNow() : performance.now();
  }

  /** The current signer; loads it (creating the first key if needed) when missing or stale. */
  signer(): Promise<Signer> {
    const ttl = this.options.ttlMs ?? SIGNER_TTL_MS;
    if (this.loading && this.now() - this.loadedAt < ttl) return this.loading;
    const generation = ++this.generation;
    const loading = loadSigner(this.db, this.ctx);
    this.loading = loading;
    this.loadedAt = this.now();
    // A failed load (database down) is not kept: the next call tries again.
    loading.catch(() => {
      if (this.generation === generation) this.loading = undefined;
    });
    return loading;
  }

  /** Forgets the signer: the next id_token reads the table again. */
  invalidate(): void {
    this.generation++;
    this.loading = undefined;
  }
}

async function loadSigner(db: Kysely<Database>, ctx: Context): Promise<Signer> {
  const row = await ensureSigningKey(db, ctx);
  return { kid: row.kid, key: await importSigningKey(row) };
}

/** One cache per database handle: the server's requests and its CLI commands share it. */
const caches = new WeakMap<Kysely<Database>, SigningKeyCache>();

function invalidateSigningKeyCache(db: Kysely<Database>): void {
  caches.get(db)?.invalidate();
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
 * The key that signs now. Given the database handle, from the process cache. Given a transaction
 * (the token endpoint signs inside the one that consumes the code), with one query in that
 * transaction: a cache keyed by a short-lived transaction would never hit, and a query on the
 * root handle from inside a PGlite transaction would wait for that transaction forever.
 */
export function currentSigner(db: Kysely<Database>, ctx: Context): Promise<Signer> {
  return db.isTransaction ? loadSigner(db, ctx) : signingKeyCache(db, ctx).signer();
}
