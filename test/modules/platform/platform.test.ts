import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openIncident,
  resolveIncident,
  setPlatformStatus,
} from '../../../src/modules/platform/platform.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
const ctx = () => ({ config: t.config, clock: t.clock });

const getStatus = async () => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/platform/status' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json();
};

describe('GET /api/v1/platform/status', () => {
  it('is public and starts operational with a live database check', async () => {
    expect(await getStatus()).toEqual({
      ok: true,
      status: 'operational',
      message: 'All systems operational.',
      incidents: [],
      services: [
        { name: 'api', status: 'operational' },
        { name: 'database', status: 'operational' },
      ],
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('shows the status and message an operator set, and when', async () => {
    t.clock.set('2026-06-02T08:00:00Z');
    await setPlatformStatus(t.database.db, ctx(), {
      status: 'maintenance',
      message: '  Database upgrade until 09:00 UTC  ',
    });
    expect(await getStatus()).toMatchObject({
      status: 'maintenance',
      message: 'Database upgrade until 09:00 UTC',
      services: [
        { name: 'api', status: 'maintenance' },
        { name: 'database', status: 'operational' },
      ],
      updated_at: '2026-06-02T08:00:00.000Z',
    });
    await setPlatformStatus(t.database.db, ctx(), { status: 'degraded' });
    expect(await getStatus()).toMatchObject({ status: 'degraded', message: 'Some services are degraded.' });
    await setPlatformStatus(t.database.db, ctx(), { status: 'operational' });
  });

  it('refuses an unknown status', async () => {
    await expect(setPlatformStatus(t.database.db, ctx(), { status: 'down' })).rejects.toMatchObject({
      error: 'invalid_request',
    });
  });

  it('lists open incidents only, newest first, until they are resolved', async () => {
    t.clock.set('2026-06-03T10:00:00Z');
    const first = await openIncident(t.database.db, ctx(), { title: 'Sign-in slow', severity: 'major' });
    t.clock.set('2026-06-03T11:00:00Z');
    const second = await openIncident(t.database.db, ctx(), {
      title: 'Search down',
      message: 'Index rebuild',
    });
    expect(first).toEqual({
      id: expect.any(Number),
      title: 'Sign-in slow',
      message: null,
      severity: 'major',
      status: 'open',
      started_at: '2026-06-03T10:00:00.000Z',
      resolved_at: null,
    });
    expect(second.severity).toBe('minor');
    expect((await getStatus()).incidents).toEqual([second, first]);

    t.clock.set('2026-06-03T12:00:00Z');
    const resolved = await resolveIncident(t.database.db, ctx(), String(first.id));
    expect(resolved).toMatchObject({
      id: first.id,
      status: 'resolved',
      resolved_at: '2026-06-03T12:00:00.000Z',
    });
    expect((await getStatus()).incidents).toEqual([second]);

    // Resolving again changes nothing.
    t.clock.set('2026-06-04T00:00:00Z');
    expect(await resolveIncident(t.database.db, ctx(), first.id)).toEqual(resolved);
  });

  it('refuses bad incidents and unknown ids', async () => {
    await expect(openIncident(t.database.db, ctx(), { title: '   ' })).rejects.toMatchObject({
      error: 'invalid_request',
    });
    await expect(
      openIncident(t.database.db, ctx(), { title: 'x', severity: 'apocalyptic' as 'minor' }),
    ).rejects.toMatchObject({ error: 'invalid_request' });
    await expect(resolveIncident(t.database.db, ctx(), '999999')).rejects.toMatchObject({
      error: 'not_found',
    });
    await expect(resolveIncident(t.database.db, ctx(), '1; drop table incidents')).rejects.toMatchObject({
      error: 'invalid_request',
    });
  });
});

describe('health checks', () => {
  it('reports liveness and readiness', async () => {
    const live = await t.app.inject({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ ok: true, status: 'live' });
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ ok: true, status: 'ready' });
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/health/live' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });

  it('refuses other methods with 405', async () => {
    expectApiError(await t.app.inject({ method: 'POST', url: '/health/ready' }), 405, 'method_not_allowed');
  });
});
