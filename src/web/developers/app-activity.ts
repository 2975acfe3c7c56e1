import type { Deps } from '../../context.js';
import { appActivity } from '../../modules/client-activity/app-activity.js';
import { recentRefusals } from '../../modules/client-activity/refusals.service.js';
import { chartScriptHrefs, uplotStylesheet } from '../console/chart-assets.js';

/** The days the activity chart and table cover. */
export const ACTIVITY_DAYS = 30;

/** One value a refused request sent, as its row shows it. */
export interface ShownValue {
  name: string;
  value: string | string[];
}

/** A refused request as the page shows it; `nearMiss`: the registered URI that differs only by a trailing slash. */
export interface ShownRefusal {
  at: string;
  endpoint: string;
  error: string;
  reason: string;
  received: ShownValue[];
  nearMiss: { sent: string; registered: string } | null;
}

const withoutSlash = (uri: string) => uri.replace(/\/+$/, '');

/**
 * The registered redirect URI that a refused one differs from by a trailing slash only (the
 * comparison is exact, RFC 6749 §3.1.2.3; integrators lose hours on this), so the page shows both.
 */
export function trailingSlashMiss(received: Record<string, string | string[]>) {
  const sent = received.redirect_uri;
  const registered = received.registered_redirect_uris;
  if (typeof sent !== 'string' || !Array.isArray(registered)) return null;
  const match = registered.find((uri) => uri !== sent && withoutSlash(uri) === withoutSlash(sent));
  return match === undefined ? null : { sent, registered: match };
}

/**
 * The activity section of an application's page: sign-ins and active users per day (the chart
 * the console's client usage draws, with public/console-charts.js and uPlot; a table holds the
 * same numbers), token requests by outcome over the same days, and the latest refused requests.
 * Only this application's numbers are read.
 */
export async function activitySection(
  deps: Deps,
  app: { clientId: string; clientPk: number },
  labels: { signIns: string; activeUsers: string },
) {
  const days = await appActivity(deps.db, {
    clientId: app.clientId,
    clientPk: app.clientPk,
    now: deps.ctx.clock.now(),
    days: ACTIVITY_DAYS,
  });
  const outcomes = new Map<string, number>();
  for (const day of days)
    for (const [outcome, count] of Object.entries(day.token_requests))
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + (count ?? 0));
  const refusals = await recentRefusals(deps.db, app.clientPk);
  return {
    days: [...days].reverse(),
    chart: JSON.stringify({
      times: days.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000),
      series: [
        { label: labels.signIns, values: days.map((day) => day.sign_ins) },
        { label: labels.activeUsers, values: days.map((day) => day.active_users) },
      ],
      whole: true,
    }),
    chartScripts: chartScriptHrefs(),
    chartStylesheet: uplotStylesheet().href,
    outcomes: [...outcomes].sort(([a], [b]) => (a === 'ok' ? -1 : b === 'ok' ? 1 : a.localeCompare(b))),
    refusals: refusals.map(
      (row): ShownRefusal => ({
        at: row.at.toISOString(),
        endpoint: row.endpoint,
        error: row.error,
        reason: row.reason,
        received: Object.entries(row.received).map(([name, value]) => ({ name, value })),
        nearMiss: trailingSlashMiss(row.received),
      }),
    ),
  };
}
