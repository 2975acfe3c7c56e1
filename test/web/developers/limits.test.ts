import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/database.js';
import { createApp, signedIn, textOf, validApp } from './portal-helpers.js';

/*
 * The portal's limits as its pages show them: DEVELOPER_APPS_PER_USER refuses another application
 * on the form itself (English and Russian), DEVELOPER_CHANGES_PER_HOUR answers the error page with
 * its wait.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { DEVELOPER_APPS_PER_USER: '1', DEVELOPER_CHANGES_PER_HOUR: '3' } });
});
afterAll(() => t.close());

describe(`the developer portal's limits on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('refuses an application past the limit on the form, keeping what was typed', async () => {
    const { browser } = await signedIn(t);
    await createApp(browser);
    const en = await browser.submit('/developers/apps/new', '/developers/apps', {
      ...validApp,
      name: 'Second',
    });
    expect(en.statusCode).toBe(403);
    expect(textOf(en.body)).toContain('An account may own at most 1 applications');
    expect(en.body).toContain('value="Second"');
    const ru = await browser.submit('/developers/apps/new?lang=ru', '/developers/apps', {
      ...validApp,
      name: 'Second',
    });
    expect(textOf(ru.body)).toContain('Достигнут предел числа ваших приложений');
  });

  it('answers the changes past the hourly limit with the error page and its wait', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const page = `/developers/apps/${clientId}`;
    for (const name of ['One', 'Two']) {
      const res = await browser.submit(page, page, { ...validApp, name });
      expect(res.statusCode).toBe(303);
    }
    const refused = await browser.submit(page, page, { ...validApp, name: 'Three' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect((await browser.get(page)).body).toContain('<h1>Two</h1>');
  });
});
