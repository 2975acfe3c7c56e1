import type { Listen } from './database.js';

/** The channel the database triggers announce changes on (migrations/0003_token_events.ts). */
export const CHANGES_CHANNEL = 'idp_token_events';

/** Something kept in memory that must forget what the database says changed. */
export interface ChangeListener {
  /** One announcement: `t:<token hash>`, `g:<grant id>`, `u:<user id>` or `c:<client id>`. */
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
