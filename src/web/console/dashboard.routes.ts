import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { RANGES, type RangeName, rangeWindow, readSeries } from '../../modules/rollups/rollups.service.js';
import { text } from '../page-forms.js';
import { pageLocale } from '../pages.js';
import { chartAssetRoutes, chartScriptHrefs, uplotStylesheet } from './chart-assets.js';
import { renderConsolePage } from './console-pages.js';
import { DASHBOARD_NAMES, dashboardCharts } from './dashboard-charts.js';
import { consoleTexts } from './i18n/index.js';

const dashboardQuery = z.object({ range: text, bucket: text });

/**
 * The range and bucket a query asks for; anything else (a link edited by hand) gets the last hour
 * at its default bucket rather than an error: the page only reads.
 */
function rangeOf(query: { range?: string; bucket?: string }): { range: RangeName; bucketMinutes: number } {
  const range: RangeName = query.range === 'day' || query.range === 'week' ? query.range : 'hour';
  const offered: readonly number[] = RANGES[range].buckets;
  const asked = Number(query.bucket);
  return { range, bucketMinutes: offered.includes(asked) ? asked : (offered[0] as number) };
}

/** The console's dashboard: charts of the per-minute rollups over the last hour, day or week. */
export const consoleDashboardRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  await app.register(chartAssetRoutes);

  const seriesOf = async (query: { range?: string; bucket?: string }) => {
    const { range, bucketMinutes } = rangeOf(query);
    const window = rangeWindow(range, ctx.clock.now(), bucketMinutes);
    const points = await readSeries(db, { names: DASHBOARD_NAMES, ...window });
    return { range, window, points };
  };

  routes.get(
    '/admin',
    {
      config: {
        auth: 'browser',
        description:
          'The console dashboard: sign-ins, tokens, charges and refused answers over the last hour, day or week (HTML)',
        console: { can: 'view' },
      },
      schema: { querystring: dashboardQuery },
    },
    async (request, reply) => {
      const locale = pageLocale(request, reply);
      const c = consoleTexts(locale).dashboard;
      const { range, window, points } = await seriesOf(request.query);
      const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
      const times = new Intl.DateTimeFormat(locale, {
        timeZone: 'UTC',
        dateStyle: range === 'hour' ? undefined : 'short',
        timeStyle: 'short',
      });
      const charts = dashboardCharts(points, window, c, {
        number: (value) => numbers.format(value),
        time: (at) => times.format(at),
      });
      return renderConsolePage(reply, deps, 'console/dashboard', {
        title: c.title,
        area: 'dashboard',
        range,
        bucketMinutes: window.bucketMinutes,
        ranges: (Object.keys(RANGES) as RangeName[]).map((name) => ({
          name,
          href: name === 'hour' ? '/admin' : `/admin?range=${name}`,
          current: name === range,
        })),
        buckets: RANGES[range].buckets.map((minutes) => ({
          minutes,
          href: `/admin?range=${range}&bucket=${minutes}`,
          current: minutes === window.bucketMinutes,
        })),
        charts,
        chartScripts: chartScriptHrefs(),
        chartStylesheet: uplotStylesheet().href,
      });
    },
  );

  routes.get(
    '/admin/dashboard/series',
    {
      config: {
        auth: 'browser',
        description:
          "The dashboard's counters as JSON: range (hour, day, week), bucket (minutes) → {from, to, bucket_minutes, points: [{at, name, key, value}]}",
        console: { can: 'view' },
      },
      schema: { querystring: dashboardQuery },
    },
    async (request, reply) => {
      const { window, points } = await seriesOf(request.query);
      reply.header('cache-control', 'no-store');
      return {
        from: window.from.toISOString(),
        to: window.to.toISOString(),
        bucket_minutes: window.bucketMinutes,
        points: points.map(({ at, name, key, value }) => ({ at: at.toISOString(), name, key, value })),
      };
    },
  );
};
