import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/lib/secrets.js';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { expectApiError } from '../../helpers/assertions.js';
import { makeUser, type TestUser } from '../../helpers/factories.js';
import { makeTotpUser } from '../../helpers/totp.js';
import { bearerGet, Phone, post, REFUSED, setUpMobileApp, t } from './mobile.fixture.js';

/*
 * The mobile second step (docs/mobile.md): for an account with a second factor,
 * verify with the right password answers 403 mfa_required with a single-use mfa_token bound to the
 * device and its key, and POST /api/v1/mobile/verify/second-factor with a TOTP or recovery code
 * and a freshly signed challenge answers as verify does.
 */

setUpMobileApp();

const STEP_MS = 30_000;
const SECOND_STEP = '/api/v1/mobile/verify/second-factor';

const totpUser = () => makeTotpUser(t);

/** 400 invalid_grant, its description matching `description` when given. */
function expectRefused(res: LightMyRequestResponse, description?: RegExp): void {
  expectApiError(res, 400, 'invalid_grant');
  if (description) expect(res.json().error_description).toMatch(description);
}

const as = (user: TestUser) => ({ username: user.username, password: user.password });

/** The password step: the 403 body with its mfa_token. */
async function passwordStep(phone: Phone, user: TestUser): Promise<{ mfa_token: string; methods: string[] }> {
  const res = await phone.verify(as(user));
  expect(res.statusCode, res.body).toBe(403);
  return res.json();
}

/** The second step, signed by `signer`'s key (the phone itself unless said). */
async function secondStep(
  phone: Phone,
  body: { mfa_token: string; code: string },
  signer: Phone = phone,
): Promise<LightMyRequestResponse> {
  const challenge = await phone.challenge();
  return post(SECOND_STEP, {
    client_id: phone.clientId,
    device_id: phone.deviceId,
    challenge,
    signature: signer.signature(challenge, phone.deviceId),
    ...body,
  });
}

async function devicesOf(userId: number): Promise<number> {
  const rows = await t.database.db
    .selectFrom('mobile_devices')
    .select('id')
    .where('user_id', '=', userId)
    .execute();
  return rows.length;
}

describe('verify of an account with a second factor', () => {
  it('answers 403 mfa_required with a hashed, 5-minute mfa_token and the methods, and issues no token', async () => {
    const { user } = await totpUser();
    const phone = new Phone();
    const res = await phone.verify(as(user));
    expect(res.statusCode).toBe(403);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      ok: false,
      error: 'mfa_required',
      error_description: expect.stringContaining('/api/v1/mobile/verify/second-factor'),
      mfa_token: expect.stringMatching(/^mfa_[A-Za-z0-9_-]{43}$/),
      methods: ['totp', 'recovery_code'],
      expires_in: 300,
    });
    expect(body).not.toHaveProperty('access_token');
    expect(await devicesOf(user.id)).toBe(0);
    const rows = await t.database.db
      .selectFrom('mobile_pending_sign_ins')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).toBe(hashSecret(body.mfa_token));
    expect(JSON.stringify(rows)).not.toContain(body.mfa_token);
    expect(rows[0]?.public_key).toBe(phone.publicKey);
    // A wrong password answers as before.
    const wrong = await phone.verify({ ...as(user), password: 'not the password' });
    expectApiError(wrong, 400, 'invalid_grant');
    expect(wrong.json().error_description).toEqual(REFUSED);
  });

  it('then a TOTP code and a fresh signature answer as verify does, and the token works', async () => {
    const { user, key } = await totpUser();
    const phone = new Phone();
    const { mfa_token } = await passwordStep(phone, user);
    const res = await secondStep(phone, { mfa_token, code: totpCodeAt(key, t.clock.now()) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      ok: true,
      access_token: expect.stringMatching(/^at_/),
      refresh_token: expect.stringMatching(/^rt_/),
      token_type: 'Bearer',
      expires_in: t.config.ACCESS_TOKEN_TTL_SECONDS,
      scope: 'openid profile email verified',
      user: expect.objectContaining({ id: user.id, username: user.username }),
    });
    const me = await bearerGet('/api/v1/me', res.json().access_token);
    expect(me.statusCode).toBe(200);
    // The key of the password step is now the device's: a refresh signed with it works.
    phone.refreshToken = res.json().refresh_token;
    expect((await phone.refresh()).statusCode).toBe(200);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'details'])
      .where('actor', '=', `user:${user.id}`)
      .where('action', 'in', ['sign_in', 'second_factor_passed', 'device_signed_in'])
      .orderBy('id')
      .execute();
    expect(audit.map((event) => event.action)).toEqual([
      'sign_in',
      'second_factor_passed',
      'device_signed_in',
    ]);
  });

  it('a recovery code finishes it too, once', async () => {
    const { user, codes } = await totpUser();
    const phone = new Phone();
    const first = await passwordStep(phone, user);
    const res = await secondStep(phone, { mfa_token: first.mfa_token, code: codes[0] as string });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().access_token).toMatch(/^at_/);
    // The same recovery code with a new password step is refused.
    const second = await passwordStep(new Phone(), user);
    const again = new Phone();
    const retry = await secondStep(again, { mfa_token: second.mfa_token, code: codes[0] as string });
    expectApiError(retry, 400, 'invalid_grant');
  });

  it('a wrong code is refused and counted; the token stays until a right code uses it, then it is spent', async () => {
    const { user, key } = await totpUser();
    const phone = new Phone();
    const { mfa_token } = await passwordStep(phone, user);
    expectRefused(await secondStep(phone, { mfa_token, code: '000000' }), /code is wrong/);
    const failed = await t.database.db
      .selectFrom('sign_in_attempts')
      .select('attempts')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(failed.attempts).toBeGreaterThanOrEqual(1);
    expect((await secondStep(phone, { mfa_token, code: totpCodeAt(key, t.clock.now()) })).statusCode).toBe(
      200,
    );
    // Reused: refused, even with the next valid code.
    t.clock.advance(STEP_MS);
    const reused = await secondStep(phone, { mfa_token, code: totpCodeAt(key, t.clock.now()) });
    expectRefused(reused, /mfa_token/);
  });

  it('an expired mfa_token, another device, another key or another client is refused', async () => {
    const { user, key } = await totpUser();
    const phone = new Phone();
    const { mfa_token } = await passwordStep(phone, user);
    const code = () => totpCodeAt(key, t.clock.now());
    // Another installation (its own device id and key) cannot use it.
    const other = new Phone();
    expectRefused(await secondStep(other, { mfa_token, code: code() }), /mfa_token/);
    // The same device id signed by another key cannot either.
    expectApiError(await secondStep(phone, { mfa_token, code: code() }, other), 400, 'invalid_grant');
    // A token that is not one at all.
    expectApiError(await secondStep(phone, { mfa_token: 'mfa_nothing', code: code() }), 400, 'invalid_grant');
    expect(await devicesOf(user.id)).toBe(0);
    // Past its 5 minutes, the right code from the right device does not help.
    t.clock.advance(300_000 + 1000);
    expectRefused(await secondStep(phone, { mfa_token, code: code() }), /mfa_token/);
    expect(await devicesOf(user.id)).toBe(0);
  });

  it('of two parallel right answers, one gets tokens', async () => {
    const { user, codes } = await totpUser();
    const phone = new Phone();
    const { mfa_token } = await passwordStep(phone, user);
    const results = await Promise.all([
      secondStep(phone, { mfa_token, code: codes[1] as string }),
      secondStep(phone, { mfa_token, code: codes[2] as string }),
    ]);
    expect(results.map((res) => res.statusCode).sort()).toEqual([200, 400]);
  });

  it('an account with passkeys only gets no method to answer with, and is told where to sign in', async () => {
    const user = await makeUser(t);
    await t.database.db
      .insertInto('passkeys')
      .values({
        user_id: user.id,
        credential_id: `cred-${user.id}`,
        public_key: 'pk',
        counter: 0,
        transports: ['internal'],
        aaguid: '00000000-0000-0000-0000-000000000000',
        backup_eligible: true,
        backed_up: true,
        name: 'Phone',
        created_at: t.clock.now(),
      })
      .execute();
    const res = await new Phone().verify(as(user));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'mfa_required', methods: [], expires_in: 300 });
    expect(res.json().error_description).toMatch(/passkey.*authenticator app.*web/);
  });

  it('an account without a second factor signs in with verify alone, as before', async () => {
    const user = await makeUser(t);
    const res = await new Phone().verify(as(user));
    expect(res.statusCode).toBe(200);
  });

  it("warns the owner in the app's language (its Accept-Language, by weight) after three wrong codes", async () => {
    const { user } = await totpUser();
    const phone = new Phone();
    const { mfa_token } = await passwordStep(phone, user);
    for (const code of ['000000', '111111', '222222']) {
      const challenge = await phone.challenge();
      const res = await post(
        SECOND_STEP,
        {
          client_id: phone.clientId,
          device_id: phone.deviceId,
          challenge,
          signature: phone.signature(challenge, phone.deviceId),
          mfa_token,
          code,
        },
        // Russian is preferred here although English comes first in the header.
        { 'accept-language': 'en;q=0.5, ru' },
      );
      expectRefused(res);
    }
    const warnings = await t.database.db
      .selectFrom('mail_outbox')
      .select(['locale', 'subject'])
      .where('user_id', '=', user.id)
      .where('kind', '=', 'second_factor_failures')
      .execute();
    expect(warnings).toEqual([{ locale: 'ru', subject: 'Неверные коды входа после вашего пароля' }]);
  });

  it('a malformed second step is 400 invalid_request', async () => {
    const phone = new Phone();
    const res = await post(SECOND_STEP, {
      client_id: phone.clientId,
      device_id: phone.deviceId,
      code: '123456',
    });
    expectApiError(res, 400, 'invalid_request');
  });
});
