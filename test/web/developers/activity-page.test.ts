import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRollups } from '../../../src/modules/rollups/rollups.repository.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/database.js';
import { makeUser } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';
import { createApp, signedIn, textOf } from './portal-helpers.js';

/*
 * The numbers of an application's page in the developer portal: sign-ins and active users per
 * day (the chart's data and its table), and the token requests of the 30 days by outcome, the
 * successful ones first, none of them another application's.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const cells = (...values: (string | number)[]) =>
  values.map((value, i) => (i === 0 ? `<td>${value}</td>` : `<td class="number">${value}</td>`)).join('');

describe(`an application's activity on its page on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('shows its sign-ins, active users and token requests by outcome, and no other application’s', async () => {
    t.clock.set('2026-06-10T12:00:00Z');
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const other = await createApp(browser, { name: 'Other Shop' });
    const today = '2026-06-10';
    const minute = new Date('2026-06-10T11:00:00Z');
    const yesterday = new Date('2026-06-09T09:00:00Z');
    await addRollups(t.database.db, [
      { minute, name: 'codes_issued', key: clientId, value: 3 },
      { minute: yesterday, name: 'codes_issued', key: clientId, value: 2 },
      { minute, name: 'token_requests', key: `${clientId}|ok`, value: 4 },
      { minute: yesterday, name: 'token_requests', key: `${clientId}|ok`, value: 1 },
      { minute, name: 'token_requests', key: `${clientId}|invalid_grant`, value: 2 },
      { minute, name: 'codes_issued', key: other.clientId, value: 40 },
      { minute, name: 'token_requests', key: `${other.clientId}|invalid_client`, value: 9 },
    ]);
    const [alice, bob] = [await makeUser(t), await makeUser(t)];
    for (const [userId, id] of [
      [alice.id, clientId],
      [bob.id, clientId],
      [alice.id, clientId],
      [bob.id, other.clientId],
    ] as const)
      await insertAccessToken(t.database.db, { userId, clientId: id, scopes: ['openid'], clock: t.clock });

    const page = await browser.get(`/developers/apps/${clientId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<tr>${cells(today, 3, 2)}</tr>`);
    expect(page.body).toContain(`<tr>${cells('2026-06-09', 2, 0)}</tr>`);
    const chart = JSON.parse(
      (/data-chart="([^"]+)"/.exec(page.body)?.[1] ?? '').replaceAll('&#34;', '"').replaceAll('&quot;', '"'),
    ) as { series: { label: string; values: number[] }[] };
    expect(chart.series.map((series) => [series.label, series.values.slice(-2)])).toEqual([
      ['Sign-ins', [2, 3]],
      ['Active users', [0, 2]],
    ]);
    const outcomes = page.body.slice(page.body.indexOf('id="outcomes-heading"'));
    const rows = [...outcomes.matchAll(/<tr><td>([^<]+)<\/td><td class="number">(\d+)<\/td><\/tr>/g)]
      .slice(0, 2)
      .map((row) => [row[1], row[2]]);
    expect(rows).toEqual([
      ['ok (tokens issued)', '5'],
      ['invalid_grant', '2'],
    ]);
    expect(textOf(page.body)).not.toContain('invalid_client');
    const theirs = await browser.get(`/developers/apps/${other.clientId}`);
    expect(theirs.body).toContain(`<tr>${cells(today, 40, 1)}</tr>`);
  });
});
