import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRollups } from '../../src/modules/rollups/rollups.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { attribute } from '../helpers/html.js';

/*
 * The console's dashboard (GET /admin): charts of the per-minute rollups with their numbers in
 * tables, over the last hour, day or week; its JSON twin; the chart library served from this origin.
 */

const MINUTE = 60_000;
let t: TestApp;
let auditor: ConsoleSession;
let now: number;

beforeAll(async () => {
  t = await createTestApp();
  auditor = await enterConsole(t, await makeOperator(t, 'auditor'));
  now = Math.floor(t.clock.now().getTime() / MINUTE) * MINUTE;
  const at = (minutesAgo: number) => new Date(now - minutesAgo * MINUTE);
  await addRollups(t.database.db, [
    { minute: at(5), name: 'sign_ins_ok', key: '', value: 3 },
    { minute: at(4), name: 'sign_ins_ok', key: '', value: 9 },
    { minute: at(5), name: 'sign_ins_failed', key: '', value: 2 },
    { minute: at(5), name: 'tokens_issued', key: '', value: 7 },
    { minute: at(5), name: 'tokens_issued', key: 'site_1', value: 100 },
    { minute: at(5), name: 'http_4xx', key: 'oauth', value: 4 },
    { minute: at(5), name: 'http_429', key: 'oauth', value: 1 },
    { minute: at(5), name: 'charges', key: '', value: 1 },
    { minute: at(5), name: 'charged_minor_units', key: '', value: 250 },
    // Two hours ago: in the day, not in the hour.
    { minute: at(120), name: 'sign_ins_ok', key: '', value: 1000 },
  ]);
});
afterAll(() => t.close());

/** The rows of a chart's table: [label, total, peak] for each series. */
function tableOf(html: string, chartId: string): string[][] {
  const section = html.split(`id="chart-${chartId}-title"`)[1]?.split('</section>')[0] ?? '';
  return [
    ...section.matchAll(
      /<tr><th scope="row">([^<]*)<\/th><td class="number">([^<]*)<\/td><td class="number">([^<]*)<\/td>/g,
    ),
  ].map((match) => match.slice(1, 4));
}

/** The data a chart's script draws. */
function chartOf(
  html: string,
  chartId: string,
): { times: number[]; series: Array<{ label: string; values: number[] }> } {
  const section = html.split(`id="chart-${chartId}-title"`)[1] ?? '';
  const div = /<div class="dashboard-plot"[^>]*>/.exec(section)?.[0] ?? '';
  return JSON.parse(attribute(div, 'data-chart') ?? 'null');
}

describe('GET /admin', () => {
  it('charts the last hour by minute, with the same numbers in tables', async () => {
    const res = await auditor.get('/admin');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(tableOf(res.body, 'signIns')).toEqual([
      ['Signed in', '12', '9'],
      ['Failed', '2', '2'],
      ['Second step failed', '0', '0'],
    ]);
    // The totals only: the per-client series are the applications' pages'.
    expect(tableOf(res.body, 'tokens')).toEqual([
      ['Codes', '0', '0'],
      ['Token sets', '7', '7'],
      ['Refreshes', '0', '0'],
    ]);
    expect(tableOf(res.body, 'coins')).toEqual([['Coins', '2.5', '2.5']]);
    // By route class: only the classes that counted something, or one line of zeros.
    expect(tableOf(res.body, 'clientErrors')).toEqual([['OAuth', '4', '4']]);
    expect(tableOf(res.body, 'rateLimited')).toEqual([['OAuth', '1', '1']]);
    expect(tableOf(res.body, 'serverErrors')).toEqual([['All routes', '0', '0']]);

    const chart = chartOf(res.body, 'signIns');
    expect(chart.times).toHaveLength(60);
    expect(chart.times.at(-1)).toBe(now / 1000);
    expect(chart.series.map((series) => series.label)).toEqual(['Signed in', 'Failed', 'Second step failed']);
    expect(chart.series[0]?.values.slice(-6)).toEqual([3, 9, 0, 0, 0, 0]);
  });

  it('offers the hour, the day and the week, and two bucket sizes each', async () => {
    const day = await auditor.get('/admin?range=day');
    expect(day.statusCode).toBe(200);
    expect(tableOf(day.body, 'signIns')[0]).toEqual(['Signed in', '1,012', '1,000']);
    expect(chartOf(day.body, 'signIns').times).toHaveLength(96);
    expect(day.body).toMatch(/<a href="\/admin\?range=day" aria-current="page">Last day<\/a>/);
    expect(day.body).toMatch(/<a href="\/admin\?range=day&amp;bucket=15" aria-current="page">15 min<\/a>/);

    const week = await auditor.get('/admin?range=week&bucket=360');
    expect(chartOf(week.body, 'signIns').times).toHaveLength(28);
    expect(week.body).toMatch(/bucket=360" aria-current="page">6 hours<\/a>/);
  });

  it('answers a range or bucket it does not offer with the last hour, not an error', async () => {
    for (const query of ['range=year', 'range=day&bucket=7', 'bucket=-1', `range=${'x'.repeat(300)}`]) {
      const res = await auditor.get(`/admin?${query}`);
      expect(res.statusCode, query).toBe(200);
      expect(res.body).toContain('aria-current="page">Last');
    }
  });

  it('loads uPlot and the charts from this origin, under the pages’ CSP, with no inline style', async () => {
    const res = await auditor.get('/admin');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("style-src 'self'");
    expect(res.body).not.toMatch(/\sstyle=/);
    expect(res.body).not.toMatch(/<script>/);
    const scripts = [...res.body.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1] as string);
    const uplot = scripts.find((src) => src.startsWith('/assets/uplot.iife.min.js?v='));
    const charts = scripts.find((src) => src.startsWith('/assets/console-charts.js?v='));
    expect(scripts.indexOf(uplot as string)).toBeLessThan(scripts.indexOf(charts as string));
    const css = /<link rel="stylesheet" href="(\/assets\/uplot\.min\.css\?v=[^"]+)"/.exec(res.body)?.[1];
    for (const [href, type] of [
      [uplot, 'text/javascript'],
      [charts, 'text/javascript'],
      [css, 'text/css'],
    ]) {
      const asset = await t.app.inject({ method: 'GET', url: href as string });
      expect(asset.statusCode, href).toBe(200);
      expect(asset.headers['content-type']).toContain(type as string);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
  });

  it('speaks Russian', async () => {
    const res = await auditor.get('/admin?lang=ru');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Сводка</h1>');
    expect(tableOf(res.body, 'signIns')[0]).toEqual(['Успешные', '12', '9']);
  });

  it('is refused to someone who is not in the console', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/admin' });
    expect(anonymous.statusCode).toBe(302);
    expect(anonymous.headers.location).toMatch(/^\/signin\?return_to=/);
    const json = await t.app.inject({ method: 'GET', url: '/admin/dashboard/series' });
    expect(json.statusCode).toBe(302);
  });
});

describe('GET /admin/dashboard/series', () => {
  it('gives the same counters as JSON, per key', async () => {
    const res = await auditor.get('/admin/dashboard/series?range=hour');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({ bucket_minutes: 1, to: new Date(now + MINUTE).toISOString() });
    expect(body.points).toContainEqual({
      at: new Date(now - 5 * MINUTE).toISOString(),
      name: 'tokens_issued',
      key: 'site_1',
      value: 100,
    });
    expect(body.points).toHaveLength(9);
  });
});
