import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedApp, deleteOwnedApp } from '../../../src/modules/developer-apps/apps.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { unescapeHtml } from '../../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../../helpers/console.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf, makeUser } from '../../helpers/factories.js';

/*
 * Applications their owners deleted are gone for them: the console's list leaves them out unless
 * asked for (?deleted=1), and names them Deleted there and on their page, not Disabled.
 */
let t: TestApp;
let operator: ConsoleSession;

beforeAll(async () => {
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '86400' } });
  operator = await enterConsole(t, await makeOperator(t, 'owner', { username: 'dora_owner' }));
});
afterAll(() => t.close());

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

async function portalApp(name: string) {
  const { db, ctx } = depsOf(t);
  const dev = await makeUser(t);
  const app = await createOwnedApp(db, ctx, {
    ownerUserId: dev.id,
    input: { name, siteUrl: 'https://dev.example', redirectUris: ['https://dev.example/cb'] },
    via: 'portal',
  });
  return { dev, app };
}

describe(`deleted applications in the console on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('leaves them out of the list, lists them under their filter as Deleted, and labels their page', async () => {
    const kept = await portalApp('Kept Zephyr Site');
    const gone = await portalApp('Gone Zephyr Site');
    const { db, ctx } = depsOf(t);
    await deleteOwnedApp(db, ctx, gone.dev.id, gone.app.client_id);

    const list = await operator.get('/admin/clients?q=Zephyr');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(kept.app.client_id);
    expect(list.body).not.toContain(gone.app.client_id);
    expect(list.body).toContain('href="/admin/clients?deleted=1"');

    const deleted = await operator.get('/admin/clients?deleted=1&q=Zephyr');
    expect(deleted.body).toContain(gone.app.client_id);
    expect(deleted.body).not.toContain(kept.app.client_id);
    const shown = text(deleted.body);
    expect(shown).toContain('Deleted applications');
    expect(shown).toContain('Deleted');
    expect(shown).not.toContain('Disabled');
    expect(deleted.body).toContain('name="deleted" value="1"');
    expect(text((await operator.get('/admin/clients?deleted=1&q=Zephyr&lang=ru')).body)).toContain('Удалено');
    await operator.get('/admin/clients?lang=en');

    const page = text((await operator.get(`/admin/clients/${gone.app.client_id}`)).body);
    expect(page).toContain('Deleted');
    expect(page).not.toMatch(/\bDisabled\b/);
    const ru = text((await operator.get(`/admin/clients/${gone.app.client_id}?lang=ru`)).body);
    expect(ru).toContain('Удалено');
    expect(ru).not.toContain('Отключено');
    await operator.get(`/admin/clients/${gone.app.client_id}?lang=en`);
  });

  it('answers a search among the deleted that finds none as any search', async () => {
    const page = await operator.get('/admin/clients?deleted=1&q=no%20such%20thing');
    expect(text(page.body)).toContain('No application matches.');
  });
});
