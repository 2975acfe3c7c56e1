import type { RollupName } from '../../modules/rollups/rollup-recorder.js';
import { alignSeries, type SeriesPoint } from '../../modules/rollups/rollups.service.js';
import { ROUTE_CLASSES } from '../../modules/rollups/route-class.js';
import type { dashboardEn } from './i18n/en-dashboard.js';

type Texts = typeof dashboardEn;
type ChartId = keyof Texts['charts'];

/** What each chart draws: counters of key '' (the totals), or one counter by route class. */
const CHARTS: ReadonlyArray<{ id: ChartId; names?: RollupName[]; byClass?: RollupName; divisor?: number }> = [
  { id: 'signIns', names: ['sign_ins_ok', 'sign_ins_failed', 'second_factor_failures'] },
  { id: 'tokens', names: ['codes_issued', 'tokens_issued', 'refreshes'] },
  { id: 'charges', names: ['charges'] },
  // Counted in hundredths of a coin (a charge has at most 2 decimals).
  { id: 'coins', names: ['charged_minor_units'], divisor: 100 },
  { id: 'clientErrors', byClass: 'http_4xx' },
  { id: 'serverErrors', byClass: 'http_5xx' },
  { id: 'rateLimited', byClass: 'http_429' },
];

/** Every counter the dashboard reads. */
export const DASHBOARD_NAMES: RollupName[] = CHARTS.flatMap((chart) =>
  chart.byClass ? [chart.byClass] : (chart.names ?? []),
);

/** One chart: its title, the data its script draws, and the same numbers as table rows. */
export interface DashboardChart {
  id: ChartId;
  title: string;
  /** JSON for public/console-charts.js: { times (Unix seconds), series: [{ label, values }], whole }. */
  data: string;
  rows: Array<{ label: string; total: string; peak: string; peakAt: string }>;
}

/**
 * The dashboard's charts from the points of `readSeries`. A chart by route class draws only the
 * classes that counted something in the window (or one line of zeros), so that seven flat lines do
 * not hide the one that matters.
 */
export function dashboardCharts(
  points: readonly SeriesPoint[],
  window: { from: Date; to: Date; bucketMinutes: number },
  texts: Texts,
  formats: { number: (value: number) => string; time: (at: Date) => string },
): DashboardChart[] {
  const ids = CHARTS.flatMap((chart) =>
    chart.byClass ? ROUTE_CLASSES.map((each) => `${chart.byClass}:${each}`) : (chart.names ?? []),
  );
  // The per-client token series are for the applications' pages, not the totals here.
  const wanted = points.filter((point) => !(point.name === 'tokens_issued' && point.key !== ''));
  const { times, values } = alignSeries(wanted, window, ids);
  return CHARTS.map((chart) => {
    const divisor = chart.divisor ?? 1;
    let series: Array<{ label: string; values: number[] }>;
    if (chart.byClass) {
      const name = chart.byClass;
      series = ROUTE_CLASSES.map((each) => ({
        label: texts.routeClasses[each] ?? each,
        values: values[`${name}:${each}`] ?? [],
      })).filter((each) => each.values.some((value) => value > 0));
      if (series.length === 0) series = [{ label: texts.series.none ?? '', values: times.map(() => 0) }];
    } else {
      series = (chart.names ?? []).map((name) => ({
        label: texts.series[name] ?? name,
        values: (values[name] ?? []).map((value) => value / divisor),
      }));
    }
    const rows = series.map(({ label, values: column }) => {
      let peakIndex = 0;
      column.forEach((value, index) => {
        if (value > (column[peakIndex] ?? 0)) peakIndex = index;
      });
      const peak = column[peakIndex] ?? 0;
      const peakTime = times[peakIndex];
      return {
        label,
        total: formats.number(column.reduce((sum, value) => sum + value, 0)),
        peak: formats.number(peak),
        peakAt: peak > 0 && peakTime !== undefined ? formats.time(new Date(peakTime * 1000)) : '–',
      };
    });
    // Counts are whole: their axis has no 0.25 steps. Coins may have cents.
    const data = JSON.stringify({ times, series, whole: divisor === 1 });
    return { id: chart.id, title: texts.charts[chart.id], data, rows };
  });
}
