import type { ChangeListener } from '../../db/change-feed.js';
import { SLOW_DOWN_STEP_SECONDS } from './device-codes.repository.js';

/** About 20 MB at most: 100,000 devices waiting at once on one instance, each polling every 5 s. */
export const DEVICE_POLL_CACHE_MAX_ENTRIES = 100_000;

/** A pending request as this instance last saw it, and how its device has polled here. */
export interface PendingPoll {
  id: number;
  clientPk: number;
  expiresAt: number;
  intervalSeconds: number;
  /** -Infinity until the device's first poll: that one is never too soon (as in the poll statement). */
  lastPollAt: number;
}

/** What the memory answers a poll: still pending, or too soon (with the grown interval). */
export type PollAnswer = { slowDown: false } | { slowDown: true; intervalSeconds: number };

/**
 * Waiting devices' requests kept in the process, so that the answer to almost every poll
 * (`authorization_pending`, RFC 8628 §3.5) needs no database statement. A request is forgotten at
 * once on every instance when it stops being pending (the `d:<id>` announcement of
 * migrations/0042), at its expiry, and whenever announcements do not arrive.
 *
 * `slow_down` is judged by the polls this instance answered: behind a load balancer a device
 * spreading its polls over N instances is told to slow down only past N times its interval.
 */
export class DevicePollCache implements ChangeListener {
  private readonly entries = new Map<string, PendingPoll>();
  private readonly byId = new Map<number, string>();
  private listening = false;
  private version = 0;

  constructor(private readonly options: { maxEntries: number }) {}

  get readVersion(): number {
    return this.version;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Answers a poll of the request with this device code hash from memory, and records it; undefined
   * when the database must answer (not kept here, another client's, or expired).
   */
  poll(deviceCodeHash: string, clientPk: number, now: number): PollAnswer | undefined {
    const entry = this.entries.get(deviceCodeHash);
    if (!entry || entry.clientPk !== clientPk) return undefined;
    if (!this.listening || now >= entry.expiresAt) {
      this.delete(deviceCodeHash);
      return undefined;
    }
    const tooSoon = now - entry.lastPollAt < entry.intervalSeconds * 1000;
    entry.lastPollAt = now;
    if (!tooSoon) return { slowDown: false };
    entry.intervalSeconds += SLOW_DOWN_STEP_SECONDS;
    return { slowDown: true, intervalSeconds: entry.intervalSeconds };
  }

  /**
   * Keeps a request just made, or one the database just found pending, unless an announcement
   * arrived since the write or read began.
   */
  set(deviceCodeHash: string, pending: PendingPoll, readVersion: number): void {
    if (!this.listening || readVersion !== this.version) return;
    if (this.entries.size >= this.options.maxEntries) {
      // The oldest entry goes (a Map iterates in insertion order): the likeliest to have expired.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    this.delete(deviceCodeHash);
    this.entries.set(deviceCodeHash, pending);
    this.byId.set(pending.id, deviceCodeHash);
  }

  handle(payload: string): void {
    // Tokens, grants, users and clients (`t:`, `g:`, `u:`, `c:`) are checked before a poll gets
    // here; a sync marker (`s:`) changes nothing.
    if (/^[tgucs]:/.test(payload)) return;
    this.version++;
    if (payload.startsWith('d:')) {
      const hash = this.byId.get(Number(payload.slice(2)));
      if (hash !== undefined) this.delete(hash);
    } else {
      this.clear(); // an announcement this version does not know: be safe
    }
  }

  setListening(listening: boolean): void {
    this.version++;
    this.listening = listening;
    this.clear();
  }

  private delete(deviceCodeHash: string): void {
    const entry = this.entries.get(deviceCodeHash);
    if (!entry) return;
    this.entries.delete(deviceCodeHash);
    this.byId.delete(entry.id);
  }

  private clear(): void {
    this.entries.clear();
    this.byId.clear();
  }
}
