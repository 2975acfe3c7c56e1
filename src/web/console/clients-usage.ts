import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { readSeries } from '../../modules/rollups/rollups.service.js';

const DAY_MS = 24 * 3600 * 1000;

/** One day's count of tokens issued to an application. */
export interface UsageDay {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  tokens: number;
}

/**
 * Token sets issued to one application per UTC day over the last `days` days, newest first, from
 * the per-minute rollups every instance adds to (`tokens_issued`, keyed by client_id): no row per
 * request is read, however busy the application.
 */
export async function usageByDay(
  db: Kysely<Database>,
  clientId: string,
  now: Date,
  days = 14,
): Promise<UsageDay[]> {
  const to = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS);
  const from = new Date(to.getTime() - days * DAY_MS);
  const points = await readSeries(db, {
    names: ['tokens_issued'],
    key: clientId,
    from,
    to,
    bucketMinutes: 24 * 60,
  });
  const byDay = new Map(points.map((point) => [point.at.getTime(), point.value]));
  const rows: UsageDay[] = [];
  for (let at = to.getTime() - DAY_MS; at >= from.getTime(); at -= DAY_MS) {
    rows.push({ day: new Date(at).toISOString().slice(0, 10), tokens: Number(byDay.get(at) ?? 0) });
  }
  return rows;
}

/**
 * The same days as the data of a chart of public/console-charts.js (the dashboard's, drawn with
 * uPlot): Unix seconds oldest first, one series, whole numbers.
 */
export function usageChartData(rows: readonly UsageDay[], label: string): string {
  const oldestFirst = [...rows].reverse();
  return JSON.stringify({
    times: oldestFirst.map((row) => Date.parse(`${row.day}T00:00:00Z`) / 1000),
    series: [{ label, values: oldestFirst.map((row) => row.tokens) }],
    whole: true,
  });
}
