import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** What is purged, and from when on a row is dead. Ledger entries and users are never purged. */
const TARGETS = [
  // Used or not, a code past its expiry can no longer be redeemed nor reused.
  { table: 'authorization_codes', column: 'expires_at' },
  { table: 'authorization_requests', column: 'expires_at' },
  // Revoked or not, an expired token is refused anyway; a rotated refresh token is kept until it
  // expires, for the reuse detection.
  { table: 'access_tokens', column: 'expires_at' },
  { table: 'refresh_tokens', column: 'expires_at' },
  { table: 'browser_sessions', column: 'expires_at' },
  { table: 'mobile_challenges', column: 'expires_at' },
  { table: 'wallet_idempotency_keys', column: 'expires_at' },
] as const satisfies ReadonlyArray<{ table: keyof Database; column: string }>;

export interface PurgeOptions {
  now: Date;
  /** Rows per DELETE: short statements that never hold many locks or bloat one transaction. */
  batchSize: number;
  /** Pause between batches, so a large backlog does not starve the requests. */
  pauseMs: number;
  /** The sign-in attempt window: a count older than it no longer matters. */
  signInWindowMs: number;
}

export type PurgeReport = Record<string, number>;

/**
 * Deletes expired codes, authorization requests, tokens, sessions, mobile challenges, idempotency
 * keys and sign-in counts, in batches of `batchSize` rows, each its own statement. Every batch
 * takes its rows with `FOR UPDATE SKIP LOCKED`, so instances purging at the same time share the
 * work instead of waiting on each other, and a row a request is using is left for the next run.
 * Returns the rows deleted per table.
 */
export async function purgeExpired(db: Kysely<Database>, options: PurgeOptions): Promise<PurgeReport> {
  const report: PurgeReport = {};
  const targets = [
    ...TARGETS.map((target) => ({ ...target, before: options.now })),
    {
      table: 'sign_in_attempts',
      column: 'window_started_at',
      before: new Date(options.now.getTime() - options.signInWindowMs),
    },
  ];
  for (const { table, column, before } of targets) {
    let total = 0;
    for (;;) {
      const result = await sql`
        delete from ${sql.table(table)}
        where ctid in (
          select ctid from ${sql.table(table)}
          where ${sql.ref(column)} < ${before}
          limit ${options.batchSize}
          for update skip locked
        )`.execute(db);
      const deleted = Number(result.numAffectedRows ?? 0n);
      total += deleted;
      if (deleted < options.batchSize) break;
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
    report[table] = total;
  }
  return report;
}

/**
 * Runs `purgeExpired` every `intervalMs` (with up to 10% jitter, so instances started together do
 * not purge in step), until the returned function stops it. A failed run is logged and retried at
 * the next interval.
 */
export function schedulePurge(
  db: Kysely<Database>,
  options: {
    intervalMs: number;
    now: () => Date;
    signInWindowMs: number;
    log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  },
): () => Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(run, options.intervalMs * (0.9 + Math.random() * 0.1));
    timer.unref();
  };
  const run = () => {
    running = purgeExpired(db, {
      now: options.now(),
      batchSize: 1000,
      pauseMs: 50,
      signInWindowMs: options.signInWindowMs,
    })
      .then((report) => {
        if (Object.values(report).some((deleted) => deleted > 0))
          options.log.info({ purged: report }, 'housekeeping: expired rows purged');
      })
      .catch((error: unknown) =>
        options.log.warn({ err: error }, 'housekeeping: purge failed; retrying at the next interval'),
      )
      .finally(schedule);
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
