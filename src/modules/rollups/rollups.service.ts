import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { RollupName } from './rollup-recorder.js';
import { sumRollups } from './rollups.repository.js';

/** One bucket's sum of one counter (and key). */
export interface SeriesPoint {
  /** The bucket's start. */
  at: Date;
  name: RollupName;
  key: string;
  value: number;
}

export interface SeriesQuery {
  names: readonly RollupName[];
  /** Only this key ('' for the totals, a client_id for one app); absent: every key apart. */
  key?: string;
  from: Date;
  to: Date;
  bucketMinutes: number;
}

/**
 * The counters `names` summed in buckets of `bucketMinutes` over [from, to), from every instance's
 * rollups. Buckets without a count are absent (see `alignSeries` for a chart's zero-filled rows).
 */
export async function readSeries(db: Kysely<Database>, query: SeriesQuery): Promise<SeriesPoint[]> {
  const buckets = await sumRollups(db, query);
  return buckets.map((bucket) => ({ ...bucket, name: bucket.name as RollupName }));
}

/** The ranges the dashboard offers, and the bucket sizes each may be drawn with (the first by default). */
export const RANGES = {
  hour: { minutes: 60, buckets: [1, 5] },
  day: { minutes: 24 * 60, buckets: [15, 60] },
  week: { minutes: 7 * 24 * 60, buckets: [60, 360] },
} as const;
export type RangeName = keyof typeof RANGES;

/** The window of a range ending at `now`: whole buckets, the last one holding the current minute. */
export function rangeWindow(
  range: RangeName,
  now: Date,
  bucketMinutes: number = RANGES[range].buckets[0],
): { from: Date; to: Date; bucketMinutes: number } {
  const bucketMs = bucketMinutes * 60_000;
  const to = new Date(Math.floor(now.getTime() / bucketMs) * bucketMs + bucketMs);
  const from = new Date(to.getTime() - Math.ceil(RANGES[range].minutes / bucketMinutes) * bucketMs);
  return { from, to, bucketMinutes };
}

/**
 * Points as a chart's columns: the buckets' starts (Unix seconds, as uPlot takes them) and, per
 * series (`name` or `name:key`), a value for each bucket, 0 where nothing was counted.
 */
export function alignSeries(
  points: readonly SeriesPoint[],
  window: { from: Date; to: Date; bucketMinutes: number },
  series: readonly string[],
): { times: number[]; values: Record<string, number[]> } {
  const bucketMs = window.bucketMinutes * 60_000;
  const times: number[] = [];
  for (let at = window.from.getTime(); at < window.to.getTime(); at += bucketMs) times.push(at / 1000);
  const values: Record<string, number[]> = {};
  for (const id of series) values[id] = times.map(() => 0);
  const start = window.from.getTime();
  for (const point of points) {
    const id = series.includes(point.name) && point.key === '' ? point.name : `${point.name}:${point.key}`;
    const column = values[id];
    const index = Math.floor((point.at.getTime() - start) / bucketMs);
    if (column && index >= 0 && index < times.length) column[index] = (column[index] ?? 0) + point.value;
  }
  return { times, values };
}
