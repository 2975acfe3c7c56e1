import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLLUP_NAMES } from '../../src/modules/rollups/rollup-recorder.js';
import { readSeries } from '../../src/modules/rollups/rollups.service.js';
import { cliDatabase, startServer, stopAllChildren, withCliDatabase } from '../helpers/cli.js';

/*
 * The rollups in a real server process (src/main.ts): what it counted reaches metric_rollups when
 * it stops on SIGTERM, before its database closes, though its minute's flush has not come yet.
 * On PGlite (DATA_DIR) or PostgreSQL (TEST_DATABASE_URL), as the run is.
 */

let database: Awaited<ReturnType<typeof cliDatabase>>;
beforeAll(async () => {
  database = await cliDatabase('idp-rollups-');
}, 60_000);
afterAll(async () => {
  await stopAllChildren();
  await database?.drop();
});

describe('a server process', () => {
  it('adds its counts to metric_rollups when it stops', async () => {
    const server = await startServer({
      env: { ...database.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
    });
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/no-such-page-${i}`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/v1/oauth/userinfo`)).status).toBe(401);
    expect((await server.stop()).code).toBe(0);

    const counted = await withCliDatabase(database.env, (db) =>
      readSeries(db, {
        names: ROLLUP_NAMES,
        from: new Date(started - 3_600_000),
        to: new Date(Date.now() + 3_600_000),
        bucketMinutes: 180,
      }),
    );
    const totals: Record<string, number> = {};
    for (const { name, key, value } of counted)
      totals[`${name}:${key}`] = (totals[`${name}:${key}`] ?? 0) + value;
    expect(totals).toEqual({ 'http_4xx:other': 3, 'http_4xx:oauth': 1 });
  }, 180_000);
});
