import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import {
  addCoOwner,
  createOwnedApp,
  updateOwnedApp,
} from '../../../src/modules/developer-apps/apps.service.js';
import { enqueueMail } from '../../../src/modules/mail/mail.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { mailTo, makeOwner, site } from './helpers.js';

/*
 * Every change of an application is mailed to its owners: the outbox's hourly budget of the kind
 * follows DEVELOPER_CHANGES_PER_HOUR, not the five per hour of the mails any form can trigger.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = { config: testConfig(), clock };

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describe('the mail of owners about changes', () => {
  it('mails each of 10 consecutive changes within the hour to the owner and the co-owner', async () => {
    const owner = await makeOwner(database.db, ctx);
    const coOwner = await makeOwner(database.db, ctx);
    const app = await createOwnedApp(database.db, ctx, {
      ownerUserId: owner.id,
      input: site(),
      via: 'portal',
    });
    await addCoOwner(database.db, ctx, owner.id, app.client_id, coOwner.username);
    const before = (await mailTo(database.db, owner.email)).length;
    const coBefore = (await mailTo(database.db, coOwner.email)).length;
    for (let i = 1; i <= 10; i += 1) {
      clock.advance(1000);
      await updateOwnedApp(database.db, ctx, i % 2 ? owner.id : coOwner.id, app.client_id, {
        name: `My Site ${i}`,
      });
    }
    const mail = (await mailTo(database.db, owner.email)).slice(before);
    expect(mail).toHaveLength(10);
    expect(mail.every((m) => m.kind === 'app_changed')).toBe(true);
    // Each names the application as it was called before its change.
    expect(mail.map((m) => m.subject)).toEqual(
      ['My Site', ...Array.from({ length: 9 }, (_, i) => `My Site ${i + 1}`)].map(
        (name) => `Your application "${name}" changed`,
      ),
    );
    expect((await mailTo(database.db, coOwner.email)).slice(coBefore)).toHaveLength(10);
  });

  it('keeps the five per hour of other kinds', async () => {
    const user = await makeOwner(database.db, ctx);
    const message = { kind: 'password_reset', userId: user.id, to: user.email, locale: 'en' as const };
    const body = { subject: 'Reset', text: 'Reset your password.', html: '<p>Reset your password.</p>' };
    const results = [];
    for (let i = 0; i < 6; i += 1)
      results.push((await enqueueMail(database.db, ctx, { ...message, ...body })).queued);
    expect(results).toEqual([true, true, true, true, true, false]);
  });
});
