import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import {
  confirmTotpEnrolment,
  startTotpEnrolment,
  totpKeyOf,
} from '../../../src/modules/mfa/totp.service.js';
import { totpCodeAt } from '../../../src/modules/mfa/totp-code.js';
import { changeProvider } from '../../../src/modules/upstream/providers.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { depsOf, makeUser } from '../../helpers/factories.js';
import { makeTotpUser } from '../../helpers/totp.js';
import type { OidcStandIn } from '../../helpers/upstream/oidc-standin.js';
import { oidcProvider, throughProvider } from '../../helpers/upstream-flow.js';

/*
 * The account's rules hold at the provider's door as at the others (docs/pages.md): its second
 * factor still applies unless the operator trusts the provider's `amr` and it says `mfa`; a disabled
 * account is refused; linking to an existing account happens only after a full, recent sign-in to
 * it; the last way in cannot be unlinked.
 */
let t: TestApp;
let provider: OidcStandIn;
let trusted: OidcStandIn;

const ACCOUNTS = {
  totp: { sub: 'sub-totp', preferred_username: 'totp_person' },
  strong: { sub: 'sub-strong', amr: ['pwd', 'otp', 'mfa'] },
  weak: { sub: 'sub-weak', amr: ['pwd'] },
  disabled: { sub: 'sub-disabled' },
  linker: {
    sub: 'sub-linker',
    preferred_username: 'linker',
    email: 'linker@example.org',
    email_verified: true,
  },
  second: { sub: 'sub-second' },
  stepper: { sub: 'sub-stepper' },
  only: { sub: 'sub-only', preferred_username: 'only' },
  fresh_strong: { sub: 'sub-fresh-strong', amr: ['pwd', 'otp', 'mfa'] },
  two: { sub: 'sub-two' },
};

beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(new Date());
  provider = await oidcProvider(t, ACCOUNTS);
  trusted = await oidcProvider(t, ACCOUNTS, { name: 'trusted', trustAmr: true });
});

afterAll(async () => {
  await provider?.stop();
  await trusted?.stop();
  await t?.close();
});

/** Links the stand-in's account to a user of ours, as an earlier link would have. */
async function linked(userId: number, sub: string, name = 'oidc'): Promise<void> {
  const row = await t.database.db
    .selectFrom('upstream_providers')
    .select(['id', 'issuer'])
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  await t.database.db
    .insertInto('upstream_links')
    .values({
      user_id: userId,
      provider_id: row.id,
      issuer: row.issuer,
      subject: sub,
      email: null,
      label: sub,
      created_at: t.clock.now(),
    })
    .execute();
}

/** A signed-in browser whose account got its authenticator app afterwards: the session holds only `pwd`. */
async function signedInBeforeItsSecondFactor() {
  const owner = await makeUser(t);
  const browser = new Browser(t.app);
  await browser.signIn(owner);
  const { db, ctx } = depsOf(t);
  await startTotpEnrolment(db, ctx, { userId: owner.id, ip: null });
  const key = (await totpKeyOf(db, ctx, owner.id))?.key as string;
  await confirmTotpEnrolment(db, ctx, {
    userId: owner.id,
    code: totpCodeAt(key, t.clock.now()),
    ip: null,
    locale: 'en',
  });
  t.clock.advance(30_000);
  return { owner, browser, key };
}

async function lastSessionAmr(userId: number): Promise<string[] | undefined> {
  const row = await t.database.db
    .selectFrom('browser_sessions')
    .select('amr')
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return row?.amr;
}

describe('an account with a second factor, signing in through a provider', () => {
  it('goes through its second step, and the session says fed otp mfa', async () => {
    const { user, key } = await makeTotpUser(t);
    await linked(user.id, 'sub-totp');
    provider.nextAccount = 'totp';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'oidc');
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('/signin/second-factor');
    // The provider's step alone grants nothing.
    expect((await browser.get('/account')).statusCode).toBe(302);
    const step = await browser.submit('/signin/second-factor', '/signin/second-factor', {
      code: totpCodeAt(key, t.clock.now()),
    });
    expect(step.statusCode).toBe(303);
    expect(await lastSessionAmr(user.id)).toEqual(['fed', 'otp', 'mfa']);
  });

  it("skips it only where the operator trusts the provider's amr and it says mfa", async () => {
    const strong = await makeTotpUser(t);
    await linked(strong.user.id, 'sub-strong', 'trusted');
    trusted.nextAccount = 'strong';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'trusted');
    expect(back.headers.location).toBe('/account');
    expect(await lastSessionAmr(strong.user.id)).toEqual(['fed', 'mfa']);

    // Trusted, but the provider did not say mfa: the account's own step.
    const weak = await makeTotpUser(t);
    await linked(weak.user.id, 'sub-weak', 'trusted');
    trusted.nextAccount = 'weak';
    expect((await throughProvider(new Browser(t.app), 'trusted')).headers.location).toBe(
      '/signin/second-factor',
    );

    // Said mfa, but the operator does not trust this provider's amr.
    await linked(strong.user.id, 'sub-strong');
    provider.nextAccount = 'strong';
    expect((await throughProvider(new Browser(t.app), 'oidc')).headers.location).toBe(
      '/signin/second-factor',
    );
  });
});

describe('a disabled account', () => {
  it('is refused at the provider door too', async () => {
    const user = await makeUser(t);
    await linked(user.id, 'sub-disabled');
    const { db, ctx } = depsOf(t);
    await disableUser(db, ctx, { username: user.username });
    provider.nextAccount = 'disabled';
    const browser = new Browser(t.app);
    const back = await throughProvider(browser, 'oidc');
    expect(back.statusCode).toBe(403);
    expect(back.body).toContain('This account is disabled');
    expect((await browser.get('/account')).statusCode).toBe(302);
  });
});

describe('linking to an account one already has', () => {
  it('happens only after signing in to that account, then finds it by the subject', async () => {
    const owner = await makeUser(t, { email: 'linker@example.org', emailVerified: true });
    provider.nextAccount = 'linker';
    const browser = new Browser(t.app);
    expect((await throughProvider(browser, 'oidc')).headers.location).toBe('/signin/providers/continue');
    // Not signed in: the link page sends to the sign-in page first, and nothing is linked by the
    // matching address.
    const link = await browser.get('/signin/providers/link');
    expect(link.statusCode).toBe(302);
    expect(link.headers.location).toBe('/signin?return_to=%2Fsignin%2Fproviders%2Flink');
    const signedIn = await browser.signIn(owner, '/signin?return_to=%2Fsignin%2Fproviders%2Flink');
    expect(signedIn.headers.location).toBe('/signin/providers/link');
    const confirm = await browser.get('/signin/providers/link');
    expect(confirm.body).toContain(`@${owner.username}`);
    const done = await browser.post(
      '/signin/providers/link',
      hiddenFields(confirm.body, '/signin/providers/link'),
    );
    expect(done.statusCode).toBe(303);

    const later = new Browser(t.app);
    expect((await throughProvider(later, 'oidc')).headers.location).toBe('/account');
    expect((await later.get('/account')).body).toContain(owner.username);
  });

  it("asks a session that never passed the account's second factor to pass it first", async () => {
    const { owner, browser, key } = await signedInBeforeItsSecondFactor();

    provider.nextAccount = 'stepper';
    expect((await throughProvider(browser, 'oidc')).headers.location).toBe('/signin/providers/continue');
    const confirm = await browser.get('/signin/providers/link');
    const asked = await browser.post(
      '/signin/providers/link',
      hiddenFields(confirm.body, '/signin/providers/link'),
    );
    expect(asked.headers.location).toBe('/signin/second-factor?return_to=%2Fsignin%2Fproviders%2Flink');
    expect(
      await t.database.db.selectFrom('upstream_links').select('id').where('user_id', '=', owner.id).execute(),
    ).toEqual([]);
    const step = await browser.submit(asked.headers.location as string, '/signin/second-factor', {
      code: totpCodeAt(key, t.clock.now()),
    });
    expect(step.headers.location).toBe('/signin/providers/link');
    const again = await browser.get('/signin/providers/link');
    const done = await browser.post(
      '/signin/providers/link',
      hiddenFields(again.body, '/signin/providers/link'),
    );
    expect(done.statusCode).toBe(303);
    expect(
      await t.database.db
        .selectFrom('upstream_links')
        .select('subject')
        .where('user_id', '=', owner.id)
        .execute(),
    ).toEqual([{ subject: 'sub-stepper' }]);
  });

  it('from the account page, and never to a second account', async () => {
    const owner = await makeUser(t);
    const browser = new Browser(t.app);
    await browser.signIn(owner);
    provider.nextAccount = 'second';
    const back = await throughProvider(browser, 'oidc', {
      from: '/account/security',
      action: '/account/providers/oidc/link',
    });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('/account/security?providers=linked#providers');
    const page = await browser.get('/account/security?providers=linked');
    expect(page.body).toContain('Linked. You can now sign in with it.');
    expect(page.body).toContain('sub-second');
    // A new way in is told to the account's confirmed address, as a new passkey is; so is its removal.
    const unlinked = await browser.post(
      '/account/providers/unlink',
      hiddenFields(page.body, '/account/providers/unlink'),
    );
    expect(unlinked.headers.location).toBe('/account/security?providers=unlinked#providers');
    const told = await t.database.db
      .selectFrom('mail_outbox')
      .select(['kind', 'subject', 'text_body'])
      .where('recipient', '=', `${owner.username}@example.com`)
      .where('kind', 'like', 'provider_%')
      .orderBy('id')
      .execute();
    expect(told.map((mail) => mail.kind)).toEqual(['provider_linked', 'provider_unlinked']);
    expect(told[0]?.text_body).toContain('The Example ID account sub-second was linked to your account.');
    // Linked again, for the second account's attempt below.
    provider.nextAccount = 'second';
    await throughProvider(browser, 'oidc', {
      from: '/account/security',
      action: '/account/providers/oidc/link',
    });

    const other = await makeUser(t);
    const thief = new Browser(t.app);
    await thief.signIn(other);
    const taken = await throughProvider(thief, 'oidc', {
      from: '/account/security',
      action: '/account/providers/oidc/link',
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('already linked to another account');
  });
});

describe('an account made through a provider', () => {
  it('keeps its last way in, re-authenticates through the provider, and deletes itself by its typed username', async () => {
    provider.nextAccount = 'only';
    const browser = new Browser(t.app);
    await throughProvider(browser, 'oidc');
    const page = await browser.get('/signin/providers/continue');
    await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'only_here',
    });
    const user = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'only_here')
      .executeTakeFirstOrThrow();

    const security = await browser.get('/account/security');
    const unlinked = await browser.post(
      '/account/providers/unlink',
      hiddenFields(security.body, '/account/providers/unlink'),
    );
    expect(unlinked.headers.location).toBe('/account/security?providers=last_way#providers');
    expect(
      await t.database.db.selectFrom('upstream_links').select('id').where('user_id', '=', user.id).execute(),
    ).toHaveLength(1);

    // Later, re-authentication: no password to ask for, the provider proves it.
    t.clock.advance((t.config.REAUTH_MAX_AGE_SECONDS + 60) * 1000);
    const guarded = await browser.get('/account/delete');
    expect(guarded.statusCode).toBe(302);
    const reauthPath = guarded.headers.location as string;
    const reauthPage = await browser.get(reauthPath);
    expect(reauthPage.body).not.toContain('name="password"');
    expect(reauthPage.body).toContain('Confirm with Example ID');
    const back = await throughProvider(browser, 'oidc', {
      from: reauthPath,
      action: '/account/reauthenticate/providers/oidc',
    });
    expect(back.headers.location).toBe('/account/delete');

    const exported = await browser.submit('/account/export', '/account/export', {});
    expect(JSON.parse(exported.body).linked_providers).toEqual([
      expect.objectContaining({ provider: 'Example ID', subject: 'sub-only' }),
    ]);

    const deletePage = await browser.get('/account/delete');
    expect(deletePage.body).toContain('name="confirm_username"');
    const wrong = await browser.post('/account/delete', {
      ...hiddenFields(deletePage.body, '/account/delete'),
      confirm_username: 'someone',
    });
    expect(wrong.statusCode).toBe(401);
    const deleted = await browser.post('/account/delete', {
      ...hiddenFields(deletePage.body, '/account/delete'),
      confirm_username: 'only_here',
    });
    expect(deleted.headers.location).toBe('/account/deleted');
    expect(
      await t.database.db.selectFrom('upstream_links').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    // The subject is free again: a new sign-in asks for a username.
    expect((await throughProvider(new Browser(t.app), 'oidc')).headers.location).toBe(
      '/signin/providers/continue',
    );
  });
});

describe('more of the same rules', () => {
  it('gives a new account made through a trusted provider that said mfa the amr fed mfa', async () => {
    trusted.nextAccount = 'fresh_strong';
    const browser = new Browser(t.app);
    await throughProvider(browser, 'trusted');
    const page = await browser.get('/signin/providers/continue');
    await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'fresh_strong',
    });
    const user = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'fresh_strong')
      .executeTakeFirstOrThrow();
    expect(await lastSessionAmr(user.id)).toEqual(['fed', 'mfa']);
  });

  it('counts a link to a disabled provider as no way in', async () => {
    provider.nextAccount = 'two';
    const browser = new Browser(t.app);
    await throughProvider(browser, 'oidc');
    const page = await browser.get('/signin/providers/continue');
    await browser.post('/signin/providers/continue', {
      ...hiddenFields(page.body, '/signin/providers/continue'),
      username: 'two_ways',
    });
    const user = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'two_ways')
      .executeTakeFirstOrThrow();
    await linked(user.id, 'sub-two-trusted', 'trusted');
    const { db, ctx } = depsOf(t);
    await changeProvider(db, ctx, { name: 'trusted', enabled: false }, 'cli');
    try {
      const security = await browser.get('/account/security');
      // The first form is the oldest link's: the enabled provider's, the account's only live way in.
      const refused = await browser.post(
        '/account/providers/unlink',
        hiddenFields(security.body, '/account/providers/unlink'),
      );
      expect(refused.headers.location).toBe('/account/security?providers=last_way#providers');
    } finally {
      await changeProvider(db, ctx, { name: 'trusted', enabled: true }, 'cli');
    }
    // With the other provider enabled again, the link is another way in.
    const security = await browser.get('/account/security');
    const allowed = await browser.post(
      '/account/providers/unlink',
      hiddenFields(security.body, '/account/providers/unlink'),
    );
    expect(allowed.headers.location).toBe('/account/security?providers=unlinked#providers');
  });

  it("asks a session without the account's second factor to pass it before linking from the account page", async () => {
    const { browser } = await signedInBeforeItsSecondFactor();
    const security = await browser.get('/account/security');
    const asked = await browser.post(
      '/account/providers/oidc/link',
      hiddenFields(security.body, '/account/providers/oidc/link'),
    );
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/signin/second-factor?return_to=%2Faccount%2Fsecurity%23providers');
  });
});
