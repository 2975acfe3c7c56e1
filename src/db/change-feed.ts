import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Listen } from './database.js';
import type { Database } from './schema.js';

/** The channel the database triggers announce changes on (migrations/0003_token_events.ts). */
export const CHANGES_CHANNEL = 'idp_token_events';

/** Something kept in memory that must forget what the database says changed. */
export interface ChangeListener {
  /**
   * One announcement: `t:<token hash>`, `g:<grant id>`, `u:<user id>`, `c:<client id>`,
   * `d:<device request id>`, or a sync marker `s:…`.
   */
  handle(payload: string): void;
  /** Whether announcements arrive; while they do not, nothing may be kept. */
  setListening(listening: boolean): void;
}

/** Feeds the database's announcements to every listener; resolves to a function that stops. */
export function listenForChanges(
  listen: Listen,
  listeners: readonly ChangeListener[],
): Promise<() => Promise<void>> {
  return listen(CHANGES_CHANNEL, {
    onMessage: (payload) => {
      for (const listener of listeners) listener.handle(payload);
    },
    onState: (listening) => {
      for (const listener of listeners) listener.setListening(listening);
    },
  });
}

/** How long `sync` waits for its own announcement before going on (the feed is then lagging or lost). */
const SYNC_TIMEOUT_MS = 1000;

/**
 * Read-your-writes for the in-process caches. The database announces a change after its commit, and
 * on PostgreSQL the announcement reaches this process's LISTEN connection a little later, so a
 * request that revokes a token could be followed by one that this instance still answers from its
 * cache. `sync` announces a marker of its own and waits until it comes back: PostgreSQL delivers
 * notifications in commit order, so every change committed before it has reached the caches then.
 */
export class ChangeSync implements ChangeListener {
  private listening = false;
  private readonly waiting = new Map<string, () => void>();

  handle(payload: string): void {
    if (!payload.startsWith('s:')) return;
    this.waiting.get(payload)?.();
  }

  setListening(listening: boolean): void {
    this.listening = listening;
    // Not listening: the caches keep nothing, so there is nothing to wait for.
    if (!listening) for (const resolve of this.waiting.values()) resolve();
  }

  async sync(db: Kysely<Database>): Promise<void> {
    if (!this.listening) return;
    const marker = `s:${randomUUID()}`;
    const arrived = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SYNC_TIMEOUT_MS);
      this.waiting.set(marker, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    try {
      await sql`select pg_notify(${CHANGES_CHANNEL}, ${marker})`.execute(db);
      await arrived;
    } finally {
      this.waiting.delete(marker);
    }
  }
}
