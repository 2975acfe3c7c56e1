import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { fixedClock } from '../../../src/lib/clock.js';
import { InvalidRequest } from '../../../src/lib/errors.js';
import {
  assertServiceSealingKey,
  recordSealingKey,
} from '../../../src/modules/sealing/sealing-key.service.js';
import { findProviderByName } from '../../../src/modules/upstream/providers.repository.js';
import {
  addProvider,
  changeProvider,
  clientSecretOf,
} from '../../../src/modules/upstream/providers.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../helpers/database.js';

/*
 * The service leaves a value sealed under its COOKIE_SECRET at each start; a process about to seal
 * a provider's secret under another key (a shell without the service's environment) is refused.
 */
let database: TestDatabase;
const clock = fixedClock(new Date('2026-06-01T12:00:00Z'));
const SERVICE = 'the-service-cookie-secret-0123456789abcdef';
const OTHER = 'another-cookie-secret-0123456789abcdefghij';
const contextWith = (env: Record<string, string>) => ({ config: testConfig(env), clock }) as Context;
const service = contextWith({ COOKIE_SECRET: SERVICE });
const elsewhere = contextWith({ COOKIE_SECRET: OTHER });
const unset = contextWith({});

const stored = async () =>
  database.db.selectFrom('sealing_key_check').select(['sealed', 'updated_at']).executeTakeFirst();

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describe(`the service's sealing key on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('lets anything seal before a service has started on the database', async () => {
    await expect(assertServiceSealingKey(database.db, unset)).resolves.toBeUndefined();
  });

  it('is recorded at a start, kept while the key is the same, replaced when the key changed', async () => {
    await recordSealingKey(database.db, service);
    const first = await stored();
    expect(first?.sealed).toMatch(/^v1\./);
    clock.advance(60_000);
    await recordSealingKey(database.db, service);
    expect(await stored()).toEqual(first);
    await recordSealingKey(database.db, elsewhere);
    const replaced = await stored();
    expect(replaced?.sealed).not.toBe(first?.sealed);
    expect(replaced?.updated_at).toEqual(clock.now());
    await recordSealingKey(database.db, service);
  });

  it('refuses to seal under another key, saying when the development default is the one in use', async () => {
    await expect(assertServiceSealingKey(database.db, service)).resolves.toBeUndefined();
    await expect(assertServiceSealingKey(database.db, elsewhere)).rejects.toThrow(
      /^COOKIE_SECRET here is not the service's: a secret sealed with it could not be opened/,
    );
    const refusal = assertServiceSealingKey(database.db, unset);
    await expect(refusal).rejects.toBeInstanceOf(InvalidRequest);
    await expect(refusal).rejects.toThrow(/not set, so the development default is in use/);
  });

  it("holds for a provider's secret: nothing is stored under a key the service cannot open", async () => {
    const github = { name: 'gh', kind: 'github' as const, clientId: 'id', clientSecret: 'secret-1' };
    await expect(addProvider(database.db, unset, github, 'operator')).rejects.toThrow(/COOKIE_SECRET/);
    expect(await findProviderByName(database.db, 'gh')).toBeUndefined();
    await addProvider(database.db, service, github, 'operator');
    await expect(
      changeProvider(database.db, elsewhere, { name: 'gh', clientSecret: 'secret-2' }, 'operator'),
    ).rejects.toThrow(/COOKIE_SECRET/);
    // A change that seals nothing needs no key.
    await changeProvider(database.db, elsewhere, { name: 'gh', displayName: 'GitHub' }, 'operator');
    const provider = await findProviderByName(database.db, 'gh');
    expect(provider?.displayName).toBe('GitHub');
    expect(provider && clientSecretOf(service, provider)).toBe('secret-1');
  });
});
