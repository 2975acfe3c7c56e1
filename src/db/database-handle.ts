import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type DatabaseDriver = 'postgres' | 'pglite';

export interface ListenHandlers {
  onMessage(payload: string): void;
  /** Whether messages are being received: false while the listening connection is down. */
  onState(listening: boolean): void;
}

/** LISTEN on a channel; resolves to a function that stops listening. */
export type Listen = (channel: string, handlers: ListenHandlers) => Promise<() => Promise<void>>;

export interface DatabaseHandle {
  db: Kysely<Database>;
  driver: DatabaseDriver;
  /** PostgreSQL LISTEN/NOTIFY: on PostgreSQL a dedicated connection that reconnects by itself. */
  listen: Listen;
  /** Closes the pool or the embedded database; safe to call twice. */
  close(): Promise<void>;
  /** The pool's connections (PostgreSQL only), for the metrics. */
  poolStats?: () => { total: number; idle: number; waiting: number; max: number };
}

export interface PostgresOptions {
  url: string;
  poolMax?: number;
  statementTimeoutMs?: number;
  /** Called when a pooled connection fails outside a query (a restarting server); such errors must not crash the process. */
  onConnectionError?: (error: Error) => void;
}

/** The handle's `close` is idempotent: the first call closes, later ones wait for it. */
export function withIdempotentClose(
  driver: DatabaseDriver,
  db: Kysely<Database>,
  listen: Listen,
): DatabaseHandle {
  let closing: Promise<void> | undefined;
  return {
    db,
    driver,
    listen,
    close: () => {
      closing ??= db.destroy();
      return closing;
    },
  };
}
