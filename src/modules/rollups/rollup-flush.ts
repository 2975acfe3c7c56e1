import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { RollupRecorder } from './rollup-recorder.js';

/** How often an instance adds its counts to the database. */
export const FLUSH_INTERVAL_MS = 60_000;

/**
 * Flushes `recorder` into the database every `intervalMs` (one minute), and once more when the
 * returned function is called at shutdown, so that the last minute's counts are not lost. A failed
 * flush is logged; its counts stay in memory for the next one.
 */
export function startRollupFlush(
  db: Kysely<Database>,
  recorder: RollupRecorder,
  options: { intervalMs?: number; log: { warn(object: object, message: string): void } },
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const flush = () => {
    running = running
      .then(() => recorder.flush(db))
      .catch((error: unknown) =>
        options.log.warn({ err: error }, 'rollups: flush failed; the counts are kept for the next one'),
      );
    return running;
  };
  const timer = setInterval(flush, options.intervalMs ?? FLUSH_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await flush();
  };
}
