import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { systemClock } from '../../src/lib/clock.js';
import { findProviderByName } from '../../src/modules/upstream/providers.repository.js';
import { clientSecretOf } from '../../src/modules/upstream/providers.service.js';
import { testConfig } from '../helpers/app.js';
import {
  cliDatabase,
  failed,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
  withCliDatabase,
} from '../helpers/cli.js';

/*
 * A provider's secret given to `idp` in a shell without the service's COOKIE_SECRET: the real
 * server (src/main.ts) leaves its key's check at its start, and the CLI process, running on the
 * database itself, refuses to seal what the service could not open.
 */

const SERVICE_SECRET = 'the-service-own-cookie-secret-0123456789ab';
let database: Awaited<ReturnType<typeof cliDatabase>>;
beforeAll(async () => {
  database = await cliDatabase('idp-sealing-');
}, 60_000);
afterAll(async () => {
  await stopAllChildren();
  await database?.drop();
});

describe("a provider's secret sealed by the CLI", () => {
  it("is refused under another COOKIE_SECRET than the service's, and stored under the same", async () => {
    const server = await startServer({
      env: {
        ...database.env,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        COOKIE_SECRET: SERVICE_SECRET,
      },
    });
    expect((await server.stop()).code).toBe(0);

    const add = ['providers', 'add', 'github', '--kind', 'github', '--client-id', 'gh', '--json'];
    failed(
      await runIdp([...add, '--client-secret', 'sealed-here'], { env: database.env }),
      /COOKIE_SECRET here is not the service's \(it is not set, so the development default is in use\)/,
    );
    const added = succeeded(
      await runIdp([...add, '--client-secret', 'sealed-here'], {
        env: { ...database.env, COOKIE_SECRET: SERVICE_SECRET },
      }),
    );
    expect(added).toMatchObject({ name: 'github' });
    const service = { config: testConfig({ COOKIE_SECRET: SERVICE_SECRET }), clock: systemClock } as Context;
    const provider = await withCliDatabase(database.env, (db) => findProviderByName(db, 'github'));
    expect(provider && clientSecretOf(service, provider)).toBe('sealed-here');
  }, 180_000);
});
