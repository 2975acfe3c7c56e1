import type { ChangeListener } from '../../db/change-feed.js';
import type { ClientWithSecretHash } from '../clients/clients.repository.js';

/**
 * Registered clients kept in the process, so that client authentication at the token endpoint
 * needs no database round trip. Like the token cache, an entry is dropped at once on every
 * instance when its row changes (a rotated secret, a disabled client: the `c:<id>` announcement of
 * migrations/0003), lives `maxAgeMs` at most, and nothing is kept while announcements do not arrive.
 */
export class ClientCache implements ChangeListener {
  private readonly entries = new Map<string, { client: ClientWithSecretHash; storedAt: number }>();
  private readonly byPk = new Map<number, string>();
  private listening = false;
  private version = 0;

  constructor(private readonly options: { maxAgeMs: number; maxEntries: number }) {}

  get readVersion(): number {
    return this.version;
  }

  get(clientId: string, now: number): ClientWithSecretHash | undefined {
    const entry = this.entries.get(clientId);
    if (!entry) return undefined;
    if (!this.listening || now - entry.storedAt >= this.options.maxAgeMs) {
      this.delete(clientId);
      return undefined;
    }
    return entry.client;
  }

  /** Keeps a row just read, unless an announcement arrived since the read began. */
  set(client: ClientWithSecretHash, now: number, readVersion: number): void {
    if (!this.listening || readVersion !== this.version) return;
    if (this.entries.size >= this.options.maxEntries) this.clear();
    this.entries.set(client.clientId, { client, storedAt: now });
    this.byPk.set(client.id, client.clientId);
  }

  handle(payload: string): void {
    // A sync marker (ChangeSync) or a device request (`d:`, the device poll cache's): no client changed.
    if (payload.startsWith('s:') || payload.startsWith('d:')) return;
    this.version++;
    if (payload.startsWith('c:')) {
      const clientId = this.byPk.get(Number(payload.slice(2)));
      if (clientId !== undefined) this.delete(clientId);
    } else if (!/^[tgu]:/.test(payload)) {
      this.clear();
    }
  }

  setListening(listening: boolean): void {
    this.version++;
    this.listening = listening;
    this.clear();
  }

  private delete(clientId: string): void {
    const entry = this.entries.get(clientId);
    if (!entry) return;
    this.entries.delete(clientId);
    this.byPk.delete(entry.client.id);
  }

  private clear(): void {
    this.entries.clear();
    this.byPk.clear();
  }
}
