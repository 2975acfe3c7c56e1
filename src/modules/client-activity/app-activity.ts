import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { countActiveUsersPerDay } from '../oauth/grants.repository.js';
import { TOKEN_OUTCOMES, type TokenOutcome } from '../rollups/rollup-recorder.js';
import { sumRollups } from '../rollups/rollups.repository.js';

const DAY_MS = 86_400_000;
/** The longest history asked for: the rollups are kept ROLLUPS_RETENTION_DAYS at most anyway. */
export const MAX_ACTIVITY_DAYS = 366;

/** One UTC day of an application's traffic. */
export interface AppActivityDay {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  /** Authorization codes issued to the application (each a sign-in through it). */
  sign_ins: number;
  /** Distinct users who received an access token of the application that day. */
  active_users: number;
  /** Token endpoint answers by outcome: `ok` or the error code; outcomes not seen are absent. */
  token_requests: Partial<Record<TokenOutcome, number>>;
}

/**
 * An application's traffic per UTC day over the `days` days ending with the day of `now`, oldest
 * first, every day present (zeros included). Sign-ins and token outcomes are read from the
 * per-minute rollups under the application's own keys, active users from its access tokens: no
 * other application's numbers are read.
 */
export async function appActivity(
  db: Kysely<Database>,
  query: { clientId: string; clientPk: number; now: Date; days?: number },
): Promise<AppActivityDay[]> {
  const days = Math.max(1, Math.min(Math.floor(query.days ?? 30), MAX_ACTIVITY_DAYS));
  const to = new Date(Math.floor(query.now.getTime() / DAY_MS) * DAY_MS + DAY_MS);
  const from = new Date(to.getTime() - days * DAY_MS);
  const outcomeKeys = TOKEN_OUTCOMES.map((outcome) => `${query.clientId}|${outcome}`);
  const [codes, outcomes, active] = await Promise.all([
    sumRollups(db, { names: ['codes_issued'], key: query.clientId, from, to, bucketMinutes: 1440 }),
    sumRollups(db, { names: ['token_requests'], keys: outcomeKeys, from, to, bucketMinutes: 1440 }),
    countActiveUsersPerDay(db, query.clientPk, from, to),
  ]);
  const byDay = new Map<string, AppActivityDay>();
  for (let at = from.getTime(); at < to.getTime(); at += DAY_MS) {
    const day = new Date(at).toISOString().slice(0, 10);
    byDay.set(day, { day, sign_ins: 0, active_users: 0, token_requests: {} });
  }
  const dayOf = (at: Date) => byDay.get(at.toISOString().slice(0, 10));
  for (const point of codes) {
    const entry = dayOf(point.at);
    if (entry) entry.sign_ins += point.value;
  }
  for (const point of outcomes) {
    const entry = dayOf(point.at);
    const outcome = point.key.slice(query.clientId.length + 1) as TokenOutcome;
    if (entry) entry.token_requests[outcome] = (entry.token_requests[outcome] ?? 0) + point.value;
  }
  for (const { day, users } of active) {
    const entry = byDay.get(day);
    if (entry) entry.active_users = users;
  }
  return [...byDay.values()];
}
