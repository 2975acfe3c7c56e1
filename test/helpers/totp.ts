import { confirmTotpEnrolment, startTotpEnrolment, totpKeyOf } from '../../src/modules/mfa/totp.service.js';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import type { TestApp } from './app.js';
import { depsOf, makeUser, type TestUser, type UserOptions } from './factories.js';

/** One RFC 6238 time step. */
export const TOTP_STEP_MS = 30_000;

/**
 * A user with an authenticator app, enrolled through the services: the key (as the app holds it)
 * and the recovery codes. The clock then moves one step on: the enrolment used the current code.
 */
export async function makeTotpUser(
  t: TestApp,
  options: UserOptions = {},
): Promise<{ user: TestUser; key: string; codes: string[] }> {
  const { db, ctx } = depsOf(t);
  const user = await makeUser(t, options);
  await startTotpEnrolment(db, ctx, { userId: user.id, ip: null });
  const key = (await totpKeyOf(db, ctx, user.id))?.key as string;
  const confirmed = await confirmTotpEnrolment(db, ctx, {
    userId: user.id,
    code: totpCodeAt(key, t.clock.now()),
    ip: null,
    locale: 'en',
  });
  if (!confirmed.ok) throw new Error('enrolment failed');
  t.clock.advance(TOTP_STEP_MS);
  return { user, key, codes: confirmed.recoveryCodes };
}
