import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/context.js';
import { updateUser } from '../../../src/modules/accounts/accounts.repository.js';
import { latestAuditEvents } from '../../../src/modules/audit/audit.repository.js';
import { latestMail } from '../../../src/modules/mail/outbox.repository.js';
import {
  beginPasskeySignIn,
  finishPasskeySignIn,
} from '../../../src/modules/passkeys/passkey-sign-in.service.js';
import { deletePasskeysOfUser, listPasskeys } from '../../../src/modules/passkeys/passkeys.repository.js';
import {
  authenticationResponse,
  registrationResponse,
} from '../../../src/modules/passkeys/passkeys.schemas.js';
import {
  beginRegistration,
  finishRegistration,
  removeUserPasskey,
  renameUserPasskey,
} from '../../../src/modules/passkeys/passkeys.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeUser, type TestUser } from '../../helpers/factories.js';
import { type Gesture, SoftAuthenticator } from './soft-authenticator.js';

/** docs/pages.md passkeys: the ceremonies as the services run them, on a real database. */
let t: TestApp;
let deps: Deps;
const site = { origin: 'http://localhost:3000', rpId: 'localhost' };

beforeAll(async () => {
  t = await createTestApp();
  deps = depsOf(t);
});
afterAll(() => t.close());

async function register(
  user: TestUser,
  authenticator: SoftAuthenticator,
  gesture: Gesture = {},
  name?: string,
) {
  const started = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
  if (!started) throw new Error('not started');
  const response = registrationResponse.parse(authenticator.register(started.options, gesture));
  return finishRegistration(deps.db, deps.ctx, {
    userId: user.id,
    ceremonyId: started.ceremonyId,
    response,
    ...(name ? { name } : {}),
    locale: 'en',
    ip: '203.0.113.9',
  });
}

async function signIn(
  authenticator: SoftAuthenticator,
  gesture: Parameters<SoftAuthenticator['authenticate']>[1] = {},
) {
  const started = await beginPasskeySignIn(deps.db, deps.ctx);
  const response = authenticationResponse.parse(authenticator.authenticate(started.options, gesture));
  return finishPasskeySignIn(deps.db, deps.ctx, {
    ceremonyId: started.ceremonyId,
    response,
    ip: '203.0.113.9',
  });
}

describe('registering a passkey', () => {
  it('asks for a discoverable credential with user verification, for the RP ID of PUBLIC_URL, excluding the user’s passkeys', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    const first = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    expect(first?.options.rp.id).toBe('localhost');
    expect(first?.options.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'required',
    });
    expect(first?.options.excludeCredentials).toEqual([]);
    expect(await register(user, authenticator)).toMatchObject({ ok: true });
    const second = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    expect(second?.options.excludeCredentials?.map((c) => c.id)).toEqual([
      authenticator.credentials[0]?.id.toString('base64url'),
    ]);
  });

  it('stores several passkeys with their names, audits each, and tells the confirmed address', async () => {
    const user = await makeUser(t);
    const result = await register(user, new SoftAuthenticator(site));
    expect(result).toMatchObject({ ok: true, passkey: { name: 'Passkey 1', counter: 0, backedUp: false } });
    const named = await register(user, new SoftAuthenticator(site, { backedUp: true }), {}, 'Phone');
    expect(named).toMatchObject({
      ok: true,
      passkey: { name: 'Phone', backupEligible: true, backedUp: true },
    });
    const known = await register(
      user,
      new SoftAuthenticator(site, { aaguid: 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4' }),
    );
    expect(known).toMatchObject({ ok: true, passkey: { name: 'Google Password Manager' } });
    expect((await listPasskeys(deps.db, user.id)).map((p) => p.name)).toEqual([
      'Passkey 1',
      'Phone',
      'Google Password Manager',
    ]);
    const events = await latestAuditEvents(deps.db, 3);
    expect(events.map((e) => [e.action, e.actor])).toEqual(
      Array(3).fill(['passkey_added', `user:${user.id}`]),
    );
    const mail = await latestMail(deps.db, { limit: 1, failedOnly: false });
    expect(mail[0]).toMatchObject({ kind: 'passkey_added', recipient: `${user.username}@example.com` });
  });

  it('sends no notice to an address that is not confirmed', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const before = await latestMail(deps.db, { limit: 1, failedOnly: false });
    expect(await register(user, new SoftAuthenticator(site))).toMatchObject({ ok: true });
    expect(await latestMail(deps.db, { limit: 1, failedOnly: false })).toEqual(before);
  });

  it('refuses a credential created without user verification, or on another origin', async () => {
    const user = await makeUser(t);
    expect(await register(user, new SoftAuthenticator(site), { userVerified: false })).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(await register(user, new SoftAuthenticator(site), { origin: 'http://evil.example' })).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(await listPasskeys(deps.db, user.id)).toEqual([]);
  });

  it('uses a ceremony once, for its own user, within 5 minutes', async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    const started = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    if (!started) throw new Error('not started');
    const response = registrationResponse.parse(authenticator.register(started.options));
    const finish = (userId: number) =>
      finishRegistration(deps.db, deps.ctx, {
        userId,
        ceremonyId: started.ceremonyId,
        response,
        locale: 'en',
        ip: null,
      });
    // Another account cannot finish it, and trying spends it.
    expect(await finish(other.id)).toEqual({ ok: false, reason: 'expired' });
    expect(await finish(user.id)).toEqual({ ok: false, reason: 'expired' });

    const late = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    if (!late) throw new Error('not started');
    const lateResponse = registrationResponse.parse(new SoftAuthenticator(site).register(late.options));
    t.clock.advance(5 * 60 * 1000);
    expect(
      await finishRegistration(deps.db, deps.ctx, {
        userId: user.id,
        ceremonyId: late.ceremonyId,
        response: lateResponse,
        locale: 'en',
        ip: null,
      }),
    ).toEqual({ ok: false, reason: 'expired' });
    // A response to another ceremony's challenge does not verify.
    const third = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    if (!third) throw new Error('not started');
    expect(
      await finishRegistration(deps.db, deps.ctx, {
        userId: user.id,
        ceremonyId: third.ceremonyId,
        response: lateResponse,
        locale: 'en',
        ip: null,
      }),
    ).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses an attestation replayed under another ceremony', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    const started = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    const again = await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    if (!started || !again) throw new Error('not started');
    const response = registrationResponse.parse(authenticator.register(started.options));
    const finish = (ceremonyId: string) =>
      finishRegistration(deps.db, deps.ctx, {
        userId: user.id,
        ceremonyId,
        response,
        locale: 'en',
        ip: null,
      });
    expect(await finish(started.ceremonyId)).toMatchObject({ ok: true });
    expect(await finish(again.ceremonyId)).toEqual({ ok: false, reason: 'invalid' });
    expect(await listPasskeys(deps.db, user.id)).toHaveLength(1);
  });

  it('does not start for a disabled account', async () => {
    const user = await makeUser(t);
    await updateUser(deps.db, user.id, { disabledAt: t.clock.now(), updatedAt: t.clock.now() });
    expect(await beginRegistration(deps.db, deps.ctx, { userId: user.id })).toBeUndefined();
  });
});

describe('signing in with a passkey', () => {
  it('asks for any discoverable credential with user verification, and signs in its owner', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site, { backedUp: true });
    const registered = await register(user, authenticator);
    const started = await beginPasskeySignIn(deps.db, deps.ctx);
    expect(started.options.allowCredentials ?? []).toEqual([]);
    expect(started.options.userVerification).toBe('required');
    expect(started.options.rpId).toBe('localhost');
    const result = await signIn(authenticator);
    expect(result).toEqual({ ok: true, userId: user.id, passkeyId: registered.ok && registered.passkey.id });
    const [passkey] = await listPasskeys(deps.db, user.id);
    expect(passkey).toMatchObject({ counter: 1, backedUp: true, lastUsedAt: t.clock.now() });
    const [event] = await latestAuditEvents(deps.db, 1);
    expect(event).toMatchObject({ action: 'sign_in', actor: `user:${user.id}`, details: { via: 'passkey' } });
  });

  it('refuses an assertion without user verification', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await register(user, authenticator);
    expect(await signIn(authenticator, { userVerified: false })).toEqual({ ok: false, reason: 'invalid' });
    const [event] = await latestAuditEvents(deps.db, 1);
    expect(event).toMatchObject({ action: 'sign_in_failed', subject: `user:${user.id}` });
  });

  it('refuses a signature counter that went backwards (a cloned authenticator)', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await register(user, authenticator);
    expect(await signIn(authenticator, { counter: 5 })).toMatchObject({ ok: true });
    expect(await signIn(authenticator, { counter: 3 })).toEqual({ ok: false, reason: 'invalid' });
    expect(await signIn(authenticator, { counter: 5 })).toEqual({ ok: false, reason: 'invalid' });
    expect(await signIn(authenticator, { counter: 6 })).toMatchObject({ ok: true });
  });

  it('refuses an unknown credential, a replayed assertion, another origin, and a disabled or deleted account', async () => {
    const stranger = new SoftAuthenticator(site);
    const unfinished = await beginRegistration(deps.db, deps.ctx, { userId: (await makeUser(t)).id });
    if (!unfinished) throw new Error('not started');
    stranger.register(unfinished.options);
    expect(await signIn(stranger)).toEqual({ ok: false, reason: 'unknown_passkey' });

    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await register(user, authenticator);
    const started = await beginPasskeySignIn(deps.db, deps.ctx);
    const response = authenticationResponse.parse(authenticator.authenticate(started.options));
    const finish = () =>
      finishPasskeySignIn(deps.db, deps.ctx, { ceremonyId: started.ceremonyId, response, ip: null });
    expect(await finish()).toMatchObject({ ok: true });
    expect(await finish()).toEqual({ ok: false, reason: 'expired' });
    expect(await signIn(authenticator, { origin: 'http://evil.example' })).toEqual({
      ok: false,
      reason: 'invalid',
    });

    await updateUser(deps.db, user.id, { disabledAt: t.clock.now(), updatedAt: t.clock.now() });
    expect(await signIn(authenticator)).toEqual({ ok: false, reason: 'account_disabled' });
    const deleted = await makeUser(t);
    const theirs = new SoftAuthenticator(site);
    await register(deleted, theirs);
    await updateUser(deps.db, deleted.id, {
      deletedAt: t.clock.now(),
      disabledAt: t.clock.now(),
      updatedAt: t.clock.now(),
    });
    expect(await signIn(theirs)).toEqual({ ok: false, reason: 'account_disabled' });
  });

  it('refuses an assertion whose user handle is not the owner’s', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await register(user, authenticator);
    const credential = authenticator.credentials[0];
    if (!credential) throw new Error('no credential');
    credential.userHandle = Buffer.from('u999999').toString('base64url');
    expect(await signIn(authenticator)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses a ceremony older than 5 minutes', async () => {
    const user = await makeUser(t);
    const authenticator = new SoftAuthenticator(site);
    await register(user, authenticator);
    const started = await beginPasskeySignIn(deps.db, deps.ctx);
    const response = authenticationResponse.parse(authenticator.authenticate(started.options));
    t.clock.advance(5 * 60 * 1000 + 1);
    expect(
      await finishPasskeySignIn(deps.db, deps.ctx, { ceremonyId: started.ceremonyId, response, ip: null }),
    ).toEqual({
      ok: false,
      reason: 'expired',
    });
  });
});

describe('managing passkeys', () => {
  it('renames and removes only the user’s own passkeys, audited, the removal told by e-mail', async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const registered = await register(user, new SoftAuthenticator(site));
    if (!registered.ok) throw new Error('not registered');
    const id = registered.passkey.id;
    expect(
      await renameUserPasskey(deps.db, deps.ctx, { userId: other.id, passkeyId: id, name: 'Mine', ip: null }),
    ).toBeUndefined();
    expect(
      await removeUserPasskey(deps.db, deps.ctx, { userId: other.id, passkeyId: id, locale: 'en', ip: null }),
    ).toBeUndefined();
    expect(
      await renameUserPasskey(deps.db, deps.ctx, {
        userId: user.id,
        passkeyId: id,
        name: 'Laptop',
        ip: null,
      }),
    ).toMatchObject({
      name: 'Laptop',
    });
    expect((await latestAuditEvents(deps.db, 1))[0]).toMatchObject({ action: 'passkey_renamed' });
    expect(
      await removeUserPasskey(deps.db, deps.ctx, { userId: user.id, passkeyId: id, locale: 'ru', ip: null }),
    ).toMatchObject({
      name: 'Laptop',
    });
    expect((await latestAuditEvents(deps.db, 1))[0]).toMatchObject({ action: 'passkey_removed' });
    const [mail] = await latestMail(deps.db, { limit: 1, failedOnly: false });
    expect(mail).toMatchObject({ kind: 'passkey_removed', recipient: `${user.username}@example.com` });
    expect(await listPasskeys(deps.db, user.id)).toEqual([]);
  });

  it('deletes every passkey of a user at once (account deletion, mfa-reset)', async () => {
    const user = await makeUser(t);
    await register(user, new SoftAuthenticator(site));
    await register(user, new SoftAuthenticator(site));
    await beginRegistration(deps.db, deps.ctx, { userId: user.id });
    expect(await deletePasskeysOfUser(deps.db, user.id)).toBe(2);
    expect(await listPasskeys(deps.db, user.id)).toEqual([]);
  });
});
