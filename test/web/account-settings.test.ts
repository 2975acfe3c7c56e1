import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/lib/password.js';
import { findCredentials, findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, formWithAction, hiddenFields, inputs, unescapeHtml } from '../helpers/browser.js';

/**
 * The account's own settings: `/account/profile` (display name, avatar URL) and
 * `/account/password` (current and new password; other sessions end), in English and Russian.
 */

let t: TestApp;
/** Three failed password checks per browser and window, so the lockout is reached quickly. */
const MAX_ATTEMPTS = 3;
beforeAll(async () => {
  t = await createTestApp({ env: { SIGN_IN_MAX_ATTEMPTS: String(MAX_ATTEMPTS) } });
});
afterAll(() => t.close());

let userCount = 0;
async function newUser(password = 'correct horse battery') {
  userCount += 1;
  const username = `settings_${userCount}`;
  const user = await createUser(
    t.database.db,
    { config: t.config, clock: t.clock },
    { username, password, displayName: 'Old Name' },
  );
  return { id: user.id, username, password };
}

async function signedIn(who: { username: string; password: string }): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(who);
  expect(browser.cookies.has('idp_session')).toBe(true);
  return browser;
}

function expectHtmlPage(res: LightMyRequestResponse, status: number): void {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
}

function fieldValue(html: string, action: string, name: string): string | undefined {
  return inputs(formWithAction(html, action)).find((input) => input.name === name)?.value;
}

async function auditRows(action: string, userId: number) {
  return t.database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'subject', 'details'])
    .where('action', '=', action)
    .where('subject', '=', `user:${userId}`)
    .execute();
}

async function attemptsOf(userId: number): Promise<number> {
  const rows = await t.database.db
    .selectFrom('sign_in_attempts')
    .select('attempts')
    .where('user_id', '=', userId)
    .execute();
  return rows.reduce((sum, row) => sum + row.attempts, 0);
}

async function storedPasswordMatches(username: string, password: string): Promise<boolean> {
  const credentials = await findCredentials(t.database.db, username);
  return verifyPassword(credentials?.passwordHash, password);
}

describe('the account page', () => {
  it('links to the profile and password pages, in English and Russian', async () => {
    const browser = await signedIn(await newUser());
    const en = await browser.get('/account');
    expectHtmlPage(en, 200);
    expect(en.body).toMatch(/<h2 id="profile-heading">Profile<\/h2>/);
    expect(en.body).toContain('<a href="/account/profile">Change your display name and avatar</a>');
    expect(en.body).toMatch(/<h2 id="password-heading">Password &amp; security<\/h2>/);
    expect(en.body).toContain('<a href="/account/password">Change your password</a>');
    // The profile section holds the username; the password comes before the apps.
    expect(en.body.indexOf('<h2 id="profile-heading">')).toBeLessThan(en.body.indexOf('<dd>@'));
    expect(en.body.indexOf('<h2 id="password-heading">')).toBeLessThan(
      en.body.indexOf('<h2 id="apps-heading">'),
    );

    const ru = await browser.get('/account?lang=ru');
    expect(ru.body).toContain('<a href="/account/profile">Изменить отображаемое имя и аватар</a>');
    expect(ru.body).toContain('<a href="/account/password">Сменить пароль</a>');
  });

  it('shows the two new notices', async () => {
    const browser = await signedIn(await newUser());
    expect((await browser.get('/account?notice=profile_updated')).body).toContain('Your profile is saved.');
    expect((await browser.get('/account?notice=password_changed')).body).toContain(
      'Your password is changed.',
    );
    expect((await browser.get('/account?notice=password_changed&lang=ru')).body).toContain('Пароль изменён.');
  });
});

describe('/account/profile', () => {
  it('shows the current display name and avatar URL', async () => {
    const user = await newUser();
    await t.database.db
      .updateTable('users')
      .set({ avatar_url: 'https://img.example/a.png' })
      .where('id', '=', user.id)
      .execute();
    const browser = await signedIn(user);
    const page = await browser.get('/account/profile');
    expectHtmlPage(page, 200);
    expect(page.body).toContain('<h1>Your profile</h1>');
    expect(fieldValue(page.body, '/account/profile', 'display_name')).toBe('Old Name');
    expect(fieldValue(page.body, '/account/profile', 'avatar_url')).toBe('https://img.example/a.png');
    expect(fieldValue(page.body, '/account/profile', 'csrf_token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.body).toContain('<label for="displayName">Display name');
    expect(page.body).toContain('<label for="avatarUrl">Avatar URL');
  });

  it('saves both fields, audits the change and says so on the account page', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const res = await browser.submit('/account/profile', '/account/profile', {
      display_name: '  Новое   имя ',
      avatar_url: 'https://img.example/new.png',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=profile_updated');
    const saved = await findUserByUsername(t.database.db, user.username);
    // Normalized as the CLI normalizes it (displayNameSchema).
    expect(saved).toMatchObject({ displayName: 'Новое имя', avatarUrl: 'https://img.example/new.png' });
    expect(await auditRows('profile_updated', user.id)).toEqual([
      {
        actor: `user:${user.id}`,
        action: 'profile_updated',
        subject: `user:${user.id}`,
        details: { via: 'account page', fields: ['displayName', 'avatarUrl'] },
      },
    ]);
    const account = await browser.get(res.headers.location as string);
    expect(account.body).toContain('Your profile is saved.');
    expect(account.body).toContain('Новое имя');
  });

  it('clears the display name and the avatar when they are emptied', async () => {
    const user = await newUser();
    await t.database.db
      .updateTable('users')
      .set({ avatar_url: '/assets/default-avatar.png' })
      .where('id', '=', user.id)
      .execute();
    const browser = await signedIn(user);
    const res = await browser.submit('/account/profile', '/account/profile', {
      display_name: '',
      avatar_url: '   ',
    });
    expect(res.statusCode).toBe(303);
    expect(await findUserByUsername(t.database.db, user.username)).toMatchObject({
      displayName: null,
      avatarUrl: null,
    });
  });

  it('writes no audit event when nothing changed', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const res = await browser.submit('/account/profile', '/account/profile', {
      display_name: 'Old Name',
      avatar_url: '',
    });
    expect(res.statusCode).toBe(303);
    expect(await auditRows('profile_updated', user.id)).toEqual([]);
  });

  it('refuses a bad avatar URL or display name by the field, keeps the values, changes nothing', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    for (const [avatar, name] of [
      ['javascript:alert(1)', 'Kept Name'],
      ['http://img.example/a.png', 'Kept Name'],
      ['//evil.example/a.png', 'Kept Name'],
    ] as const) {
      const res = await browser.submit('/account/profile', '/account/profile', {
        display_name: name,
        avatar_url: avatar,
      });
      expectHtmlPage(res, 400);
      expect(res.body).toContain('Correct the fields marked below.');
      expect(res.body).toContain('id="avatarUrl-error"');
      expect(res.body).not.toContain('id="displayName-error"');
      expect(fieldValue(res.body, '/account/profile', 'avatar_url')).toBe(avatar);
      expect(fieldValue(res.body, '/account/profile', 'display_name')).toBe(name);
    }
    const longName = 'x'.repeat(65);
    const res = await browser.submit('/account/profile', '/account/profile', {
      display_name: longName,
      avatar_url: 'https://img.example/ok.png',
    });
    expectHtmlPage(res, 400);
    expect(res.body).toContain('id="displayName-error"');
    expect(res.body).not.toContain('id="avatarUrl-error"');
    expect(fieldValue(res.body, '/account/profile', 'display_name')).toBe(longName);
    expect(fieldValue(res.body, '/account/profile', 'avatar_url')).toBe('https://img.example/ok.png');
    expect(await findUserByUsername(t.database.db, user.username)).toMatchObject({
      displayName: 'Old Name',
      avatarUrl: null,
    });
    expect(await auditRows('profile_updated', user.id)).toEqual([]);

    const ru = await browser.post('/account/profile?lang=ru', {
      ...hiddenFields((await browser.get('/account/profile')).body, '/account/profile'),
      display_name: 'Имя',
      avatar_url: 'ftp://x',
    });
    expectHtmlPage(ru, 400);
    expect(ru.body).toContain('Исправьте отмеченные ниже поля.');
    expect(unescapeHtml(ru.body)).toContain('Введите адрес, начинающийся с https://');
  });

  it('refuses a POST without the CSRF token (403 page) and sends a browser without a session to sign in', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const forged = await browser.post('/account/profile', { display_name: 'Forged', avatar_url: '' });
    expectHtmlPage(forged, 403);
    expect(forged.body).toContain('This form has expired');
    expect(await findUserByUsername(t.database.db, user.username)).toMatchObject({ displayName: 'Old Name' });

    const stranger = new Browser(t.app);
    const page = await stranger.get('/account/profile');
    expect(page.statusCode).toBe(302);
    expect(page.headers.location).toBe('/signin?return_to=/account');
    // A stranger's own CSRF token (from the sign-in page) passes the CSRF check, not the session one.
    const signInPage = await stranger.get('/signin');
    const post = await stranger.post('/account/profile', {
      csrf_token: hiddenFields(signInPage.body, '/signin').csrf_token as string,
      display_name: 'Stranger',
      avatar_url: '',
    });
    expect(post.statusCode).toBe(303);
    expect(post.headers.location).toBe('/signin?return_to=/account');
  });

  it('renders in Russian', async () => {
    const browser = await signedIn(await newUser());
    const page = await browser.get('/account/profile?lang=ru');
    expectHtmlPage(page, 200);
    expect(page.body).toMatch(/<html lang="ru">/);
    expect(page.body).toContain('<h1>Ваш профиль</h1>');
    expect(page.body).toContain('Отображаемое имя');
    expect(page.body).toContain('Адрес аватара');
    expect(page.body).toContain('Сохранить профиль');
  });
});

describe('/account/password', () => {
  const NEW_PASSWORD = 'a brand new passphrase';

  it('shows the three password fields, with nothing filled in', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const page = await browser.get('/account/password');
    expectHtmlPage(page, 200);
    expect(page.body).toContain('<h1>Change your password</h1>');
    const fields = inputs(formWithAction(page.body, '/account/password'));
    expect(fields.filter((field) => field.type === 'password').map((field) => field.name)).toEqual([
      'current_password',
      'new_password',
      'password_confirm',
    ]);
    expect(fields.filter((field) => field.type === 'password').every((field) => !field.value)).toBe(true);
    expect(fieldValue(page.body, '/account/password', 'username')).toBe(user.username);
  });

  it('changes the password, ends the other sessions only, and audits it', async () => {
    const user = await newUser();
    const here = await signedIn(user);
    const elsewhere = await signedIn(user);
    expect((await elsewhere.get('/account')).statusCode).toBe(200);

    const res = await here.submit('/account/password', '/account/password', {
      current_password: user.password,
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expect(res.statusCode).toBe(303);
    // Both boxes unticked here (a form posted without them): the confirmation says nothing of them.
    expect(res.headers.location).toBe('/account/password/changed?devices=0&apps=0');

    // This browser stays signed in; the other one is sent to sign in.
    const account = await here.get(res.headers.location as string);
    expectHtmlPage(account, 200);
    expect(account.body).toContain('Your password is changed');
    const gone = await elsewhere.get('/account');
    expect(gone.statusCode).toBe(302);
    expect(gone.headers.location).toBe('/signin?return_to=/account');

    // The old password fails at /signin, the new one works.
    const old = await new Browser(t.app).submit('/signin', '/signin', {
      username: user.username,
      password: user.password,
    });
    expectHtmlPage(old, 401);
    await signedIn({ username: user.username, password: NEW_PASSWORD });

    expect(await auditRows('password_changed', user.id)).toEqual([
      {
        actor: `user:${user.id}`,
        action: 'password_changed',
        subject: `user:${user.id}`,
        details: {
          via: 'account page',
          other_sessions_ended: 1,
          session_rotated: true,
          devices_signed_out: 0,
          apps_revoked: false,
          grants_revoked: 0,
          reset_links_ended: 0,
        },
      },
    ]);
  });

  it('refuses a wrong current password: no change, the attempt counted and audited', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const other = await signedIn(user);
    const before = await attemptsOf(user.id);
    const res = await browser.submit('/account/password', '/account/password', {
      current_password: 'not my password',
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expectHtmlPage(res, 400);
    expect(res.body).toContain('id="currentPassword-error"');
    expect(res.body).toContain('This is not your current password.');
    // No password is put back into the page.
    expect(res.body).not.toContain('not my password');
    expect(res.body).not.toContain(NEW_PASSWORD);
    expect(await attemptsOf(user.id)).toBe(before + 1);
    expect(await storedPasswordMatches(user.username, user.password)).toBe(true);
    expect((await other.get('/account')).statusCode).toBe(200);
    expect(await auditRows('password_changed', user.id)).toEqual([]);
    expect(await auditRows('password_change_failed', user.id)).toHaveLength(1);
  });

  it('cannot be used to guess the password: past the sign-in budget even the right one is refused', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const res = await browser.submit('/account/password', '/account/password', {
        current_password: `guess ${i}`,
        new_password: NEW_PASSWORD,
        password_confirm: NEW_PASSWORD,
      });
      expectHtmlPage(res, 400);
    }
    const right = await browser.submit('/account/password', '/account/password', {
      current_password: user.password,
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expectHtmlPage(right, 400);
    expect(right.body).toContain('This is not your current password.');
    expect(await storedPasswordMatches(user.username, user.password)).toBe(true);
    // The same budget as the sign-in page: this browser cannot sign in with it either, for now.
    const signIn = await browser.submit('/signin', '/signin', {
      username: user.username,
      password: user.password,
    });
    expectHtmlPage(signIn, 401);
  });

  it('refuses a short, a common or a mismatched new password by the field, without checking the current one', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const before = await attemptsOf(user.id);
    const cases = [
      { new_password: 'short', password_confirm: 'short', text: 'at least 8 characters' },
      { new_password: 'password123', password_confirm: 'password123', text: 'most common passwords' },
      { new_password: NEW_PASSWORD, password_confirm: `${NEW_PASSWORD}!`, text: 'are not the same' },
    ];
    for (const { text, ...fields } of cases) {
      const res = await browser.submit('/account/password', '/account/password', {
        current_password: user.password,
        ...fields,
      });
      expectHtmlPage(res, 400);
      expect(res.body).toContain(text);
      expect(res.body).toContain(
        fields.new_password === NEW_PASSWORD ? 'id="passwordConfirm-error"' : 'id="newPassword-error"',
      );
    }
    const empty = await browser.submit('/account/password', '/account/password', {
      current_password: '',
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expectHtmlPage(empty, 400);
    expect(empty.body).toContain('Enter your current password.');
    expect(await attemptsOf(user.id)).toBe(before);
    expect(await storedPasswordMatches(user.username, user.password)).toBe(true);

    const ru = await browser.post('/account/password?lang=ru', {
      ...hiddenFields((await browser.get('/account/password')).body, '/account/password'),
      current_password: user.password,
      new_password: 'qwerty123',
      password_confirm: 'qwerty123',
    });
    expectHtmlPage(ru, 400);
    expect(ru.body).toContain('Это один из самых распространённых паролей');
  });

  it('checks no password for a form naming another account (the per-account limit keys on the name)', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const before = await attemptsOf(user.id);
    const page = await browser.get('/account/password');
    const res = await browser.post('/account/password', {
      ...hiddenFields(page.body, '/account/password'),
      username: 'somebody_else',
      current_password: user.password,
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expectHtmlPage(res, 400);
    expect(await attemptsOf(user.id)).toBe(before);
    expect(await storedPasswordMatches(user.username, user.password)).toBe(true);
  });

  it('refuses a POST without the CSRF token (403 page) and sends a browser without a session to sign in', async () => {
    const user = await newUser();
    const browser = await signedIn(user);
    const forged = await browser.post('/account/password', {
      username: user.username,
      current_password: user.password,
      new_password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expectHtmlPage(forged, 403);
    expect(await storedPasswordMatches(user.username, user.password)).toBe(true);

    const stranger = new Browser(t.app);
    const page = await stranger.get('/account/password');
    expect(page.statusCode).toBe(302);
    expect(page.headers.location).toBe('/signin?return_to=/account');
  });

  it('renders in Russian', async () => {
    const browser = await signedIn(await newUser());
    const page = await browser.get('/account/password?lang=ru');
    expectHtmlPage(page, 200);
    expect(page.body).toMatch(/<html lang="ru">/);
    expect(page.body).toContain('<h1>Смена пароля</h1>');
    expect(page.body).toContain('Текущий пароль');
    expect(page.body).toContain('Новый пароль');
    expect(page.body).toContain('Повторите новый пароль');
    expect(page.body).toContain('Сменить пароль');
  });
});

describe('the per-account rate limit of the password form', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_ACCOUNT_PER_MIN: '3' } });
  });
  afterAll(() => limited.close());

  it('counts the password checks of the signed-in account, whatever address they come from', async () => {
    await createUser(
      limited.database.db,
      { config: limited.config, clock: limited.clock },
      { username: 'limited', password: 'correct horse battery' },
    );
    const browser = new Browser(limited.app);
    await browser.signIn({ username: 'limited', password: 'correct horse battery' });
    const form = hiddenFields((await browser.get('/account/password')).body, '/account/password');
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const post = (remoteAddress: string) =>
      limited.app.inject({
        method: 'POST',
        url: '/account/password',
        remoteAddress,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          ...form,
          current_password: 'wrong guess',
          new_password: 'a brand new passphrase',
          password_confirm: 'a brand new passphrase',
        }).toString(),
      });
    expect((await post('10.0.0.1')).statusCode).toBe(400);
    expect((await post('10.0.0.2')).statusCode).toBe(400);
    expect((await post('10.0.0.3')).statusCode).toBe(400);
    // A fresh address, so no per-address limit applies: the account's limit answers.
    const refused = await post('10.0.0.4');
    expect(refused.statusCode).toBe(429);
  });
});
