import type { ChangeListener } from '../../db/change-feed.js';
import type { User } from '../accounts/user.js';

/** What a valid access token grants: who, through which client, with which scopes. */
export interface AccessTokenContext {
  /** SHA-256 of the token (its primary key): what a per-token rate limit or a revocation keys on. */
  tokenHash: string;
  grantId: number;
  userId: number;
  /** The client's database id. */
  clientPk: number;
  /** The client's public `client_id` (`pk_…`). */
  clientId: string;
  scopes: string[];
  expiresAt: Date;
  user: User;
  /** RFC 9449 §6: the thumbprint of the DPoP key the token is bound to; null for a bearer token. */
  jkt: string | null;
}

/** The longest an entry lives, in case an announcement were ever missed. */
export const CACHE_MAX_AGE_MS = 10_000;
/** About 1 KB an entry: at most some 50 MB. */
export const TOKEN_CACHE_MAX_ENTRIES = 50_000;

/**
 * Access tokens found valid, kept in the process so that a bearer request needs no round trip.
 * An entry dies when its token, grant, user or client changes (announced by the database on every
 * instance: migrations/0003_token_events.ts), when the token expires, after `maxAgeMs` in case an
 * announcement is missed, and with all others while the listening connection is lost.
 */
export class AccessTokenCache implements ChangeListener {
  private readonly entries = new Map<string, { context: AccessTokenContext; storedAt: number }>();
  private readonly byGrant = new Map<number, Set<string>>();
  private readonly byUser = new Map<number, Set<string>>();
  private readonly byClient = new Map<number, Set<string>>();
  private listening = false;
  /** Counts announcements and listening changes: a read that saw another version is not cached. */
  private version = 0;

  constructor(private readonly options: { maxAgeMs: number; maxEntries: number }) {}

  /** A cached, still valid context for this token hash, or undefined. */
  get(tokenHash: string, now: number): AccessTokenContext | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (
      !this.listening ||
      now - entry.storedAt >= this.options.maxAgeMs ||
      entry.context.expiresAt.getTime() <= now
    ) {
      this.delete(tokenHash);
      return undefined;
    }
    return entry.context;
  }

  /** Take before reading a token from the database, and give to `set` after. */
  get readVersion(): number {
    return this.version;
  }

  /**
   * Keeps a context that was just found valid in the database — unless an announcement arrived
   * since the read began (`readVersion`): the read may predate that change, and caching it would
   * bring back a token the announcement just ended.
   */
  set(context: AccessTokenContext, now: number, readVersion: number): void {
    if (!this.listening || readVersion !== this.version) return;
    if (this.entries.size >= this.options.maxEntries) {
      // The oldest entry goes (a Map iterates in insertion order).
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    this.delete(context.tokenHash);
    this.entries.set(context.tokenHash, { context, storedAt: now });
    index(this.byGrant, context.grantId, context.tokenHash);
    index(this.byUser, context.userId, context.tokenHash);
    index(this.byClient, context.clientPk, context.tokenHash);
  }

  /** Applies one announcement: `t:<hash>`, `g:<grant id>`, `u:<user id>` or `c:<client id>`. */
  handle(payload: string): void {
    const kind = payload.slice(0, 2);
    // A sync marker (ChangeSync) or a device request (`d:`, the device poll cache's): no token changed.
    if (kind === 's:' || kind === 'd:') return;
    this.version++;
    const key = payload.slice(2);
    if (kind === 't:') this.delete(key);
    else if (kind === 'g:') this.deleteAll(this.byGrant.get(Number(key)));
    else if (kind === 'u:') this.deleteAll(this.byUser.get(Number(key)));
    else if (kind === 'c:') this.deleteAll(this.byClient.get(Number(key)));
    else this.clear(); // an announcement this version does not know: be safe
  }

  /** Whether announcements arrive. Losing them empties the cache and stops caching. */
  setListening(listening: boolean): void {
    this.version++;
    this.listening = listening;
    this.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.byGrant.clear();
    this.byUser.clear();
    this.byClient.clear();
  }

  private deleteAll(hashes: Set<string> | undefined): void {
    if (!hashes) return;
    for (const hash of [...hashes]) this.delete(hash);
  }

  private delete(tokenHash: string): void {
    const entry = this.entries.get(tokenHash);
    if (!entry) return;
    this.entries.delete(tokenHash);
    unindex(this.byGrant, entry.context.grantId, tokenHash);
    unindex(this.byUser, entry.context.userId, tokenHash);
    unindex(this.byClient, entry.context.clientPk, tokenHash);
  }
}

function index(map: Map<number, Set<string>>, key: number, hash: string): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(hash);
}

function unindex(map: Map<number, Set<string>>, key: number, hash: string): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(hash);
  if (set.size === 0) map.delete(key);
}
