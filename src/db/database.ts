import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
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

const INT8_OID = 20;

/**
 * int8 as a JavaScript number on both drivers (PGlite already does this; pg returns strings).
 * Our int8 values are identifiers and minor units, far below 2^53; a larger one is a bug, not data.
 */
function parseInt8(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed))
    throw new RangeError(`int8 value ${value} exceeds the safe integer range`);
  return parsed;
}

const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Real PostgreSQL through a `pg` pool. */
export function openPostgres(options: PostgresOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    // Fail fast while the server is down, so callers get 503 instead of waiting.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    types: pgTypes,
  });
  const onConnectionError = (error: Error) => options.onConnectionError?.(error);
  // Idle connections report to the pool. A checked-out connection that dies before its query is
  // sent (the server restarted) emits 'error' on the client itself, which would crash the process
  // without a listener: the query still fails (503), and the pool drops the broken connection.
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  return {
    ...withIdempotentClose(
      'postgres',
      new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
      postgresListen(options.url),
    ),
    poolStats: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: options.poolMax ?? 10,
    }),
  };
}

/** How long a lost LISTEN connection waits before it reconnects. */
const LISTEN_RETRY_MS = 1_000;

/**
 * LISTEN on its own connection (a pooled one would be handed to queries). When the connection is
 * lost, `onState(false)` says so at once, and it reconnects every second until it listens again.
 */
function postgresListen(url: string): Listen {
  return async (channel, handlers) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let current: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    let stopped = false;
    const scheduleReconnect = () => {
      if (stopped || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, LISTEN_RETRY_MS);
      retry.unref();
    };
    const connect = async () => {
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: 5_000,
        keepAlive: true,
      });
      client.on('notification', (message) => {
        if (message.channel === channel && message.payload) handlers.onMessage(message.payload);
      });
      client.on('error', () => undefined); // 'end' follows
      client.on('end', () => {
        if (current !== client) return;
        current = undefined;
        handlers.onState(false);
        scheduleReconnect();
      });
      try {
        await client.connect();
        await client.query(`listen ${channel}`);
      } catch {
        client.end().catch(() => undefined);
        handlers.onState(false);
        scheduleReconnect();
        return;
      }
      if (stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      current = client;
      handlers.onState(true);
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => undefined);
    };
  };
}

/**
 * Embedded PostgreSQL (PGlite), persisted in `dataDir`, or in memory when `dataDir` is undefined.
 * `from` starts a new database as a copy of another's `dumpDataDir()` instead of an empty one.
 *
 * PGlite is one session: kysely-pglite-dialect queues every caller on its single connection, so
 * transactions never interleave. The price: code inside a transaction must use the transaction
 * object only, never `db`, or it waits for itself.
 */
export async function openPglite(dataDir?: string, from?: Blob): Promise<DatabaseHandle> {
  if (dataDir) await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(from ? { loadDataDir: from } : {}),
    extensions: { pg_trgm },
  });
  // One process owns the embedded database, so its notifications never get lost.
  const listen: Listen = async (channel, handlers) => {
    const unsubscribe = await pglite.listen(channel, (payload) => handlers.onMessage(payload));
    handlers.onState(true);
    return unsubscribe;
  };
  return withIdempotentClose('pglite', new Kysely<Database>({ dialect: new PGliteDialect(pglite) }), listen);
}

function withIdempotentClose(driver: DatabaseDriver, db: Kysely<Database>, listen: Listen): DatabaseHandle {
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
