import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import {
  type DatabaseHandle,
  type Listen,
  type PostgresOptions,
  withIdempotentClose,
} from './database-handle.js';
import { preparedStatementName } from './prepared.js';
import type { Database } from './schema.js';

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
  pool.on('connect', (client) => {
    client.on('error', onConnectionError);
    prepareMarkedStatements(client);
  });
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

/**
 * Kysely's driver sends every statement unnamed, so PostgreSQL parses and plans it on each call.
 * A statement marked with `prepared` (src/db/prepared.ts) is sent as a named one instead:
 * node-postgres parses it once per connection and then only binds and executes it, and after a
 * few calls PostgreSQL keeps its generic plan.
 */
function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    const marked =
      typeof text === 'string' && rest.length === 0 && (values === undefined || Array.isArray(values));
    const name = marked ? preparedStatementName(text) : undefined;
    return name === undefined ? query(text, values, ...rest) : query({ name, text, values });
  }) as typeof client.query;
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
