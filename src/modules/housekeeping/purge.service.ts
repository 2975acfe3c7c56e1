import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { endBrowserSessions } from '../accounts/session-end.service.js';
import { deleteExpiredBatch, EXPIRING, METRIC_ROLLUPS, SIGN_IN_ATTEMPTS } from './purge.repository.js';

export interface PurgeOptions {
  /** Rows per DELETE: short statements that never hold many locks or bloat one transaction. */
  batchSize: number;
  /** Pause between batches, so a large backlog does not starve the requests. */
  pauseMs: number;
}

export type PurgeReport = Record<string, number>;

/**
 * Deletes expired codes, authorization requests (pushed ones too), tokens, sessions, mobile
 * challenges, idempotency keys, sign-in counts older than `SIGN_IN_WINDOW_SECONDS` and the charts'
 * per-minute counters older than `ROLLUPS_RETENTION_DAYS`, in batches of `batchSize` rows,
 * each its own statement. Returns the rows deleted per table.
 */
export async function purgeExpired(
  db: Kysely<Database>,
  ctx: Context,
  options: PurgeOptions,
): Promise<PurgeReport> {
  const now = ctx.clock.now();
  const report: PurgeReport = {};
  const targets = [
    ...EXPIRING.map((target) => ({ target, before: now })),
    {
      target: SIGN_IN_ATTEMPTS,
      before: new Date(now.getTime() - ctx.config.SIGN_IN_WINDOW_SECONDS * 1000),
    },
    {
      target: METRIC_ROLLUPS,
      before: new Date(now.getTime() - ctx.config.ROLLUPS_RETENTION_DAYS * 86_400_000),
    },
  ];
  // An expired session ends like any other: its sites get logout tokens, queued in the transaction
  // of each batch's deletion.
  let sessions = 0;
  for (;;) {
    const { sessionsEnded } = await endBrowserSessions(
      db,
      ctx,
      { expiredAt: now, limit: options.batchSize },
      'expired',
    );
    sessions += sessionsEnded;
    if (sessionsEnded < options.batchSize) break;
    if (options.pauseMs > 0) await sleep(options.pauseMs);
  }
  report.browser_sessions = sessions;
  for (const { target, before } of targets) {
    let total = 0;
    for (;;) {
      const deleted = await deleteExpiredBatch(db, target, before, options.batchSize);
      total += deleted;
      if (deleted < options.batchSize) break;
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
    report[target.table] = total;
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
  ctx: Context,
  options: {
    intervalMs: number;
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
    running = purgeExpired(db, ctx, { batchSize: 1000, pauseMs: 50 })
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
