import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, unescapeHtml } from '../helpers/browser.js';
import { makeUser, type UserOptions } from '../helpers/factories.js';

/**
 * The account page's sections (issue 17): a contents list of anchors, then Profile, E-mail,
 * Password & security, Connected apps, Devices, Your data and Danger zone, in English and Russian.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function accountOf(options: UserOptions = {}): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(await makeUser(t, options));
  return browser;
}

/** The part of the page from `<section id="…">` to its end. */
function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}"`);
  expect(start, `section ${id}`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

const ORDER = ['profile', 'email', 'security', 'apps', 'devices', 'data', 'danger'];

describe('the account page', () => {
  it('lists its sections in a contents list of anchors, in the order of the page, in both languages', async () => {
    const browser = await accountOf();
    for (const [lang, label, names] of [
      [
        'en',
        'On this page',
        [
          'Profile',
          'E-mail',
          'Password & security',
          'Connected apps',
          'Signed-in devices',
          'Your data',
          'Danger zone',
        ],
      ],
      [
        'ru',
        'На этой странице',
        [
          'Профиль',
          'Электронная почта',
          'Пароль и безопасность',
          'Подключённые приложения',
          'Устройства, на которых выполнен вход',
          'Ваши данные',
          'Опасная зона',
        ],
      ],
    ] as const) {
      const page = await browser.get(`/account?lang=${lang}`);
      expect(page.statusCode).toBe(200);
      const nav = /<nav class="contents" aria-labelledby="contents-heading">([\s\S]*?)<\/nav>/.exec(
        page.body,
      )?.[1];
      expect(nav).toContain(`<h2 id="contents-heading" class="contents-heading">${label}</h2>`);
      const links = [...(nav ?? '').matchAll(/<a href="#([a-z]+)">([^<]+)<\/a>/g)];
      expect(links.map((link) => link[1])).toEqual(ORDER);
      expect(links.map((link) => unescapeHtml(link[2] ?? ''))).toEqual(names);
      // Each anchor leads to its section, and the sections follow the list's order.
      const positions = ORDER.map((id) => page.body.indexOf(`<section id="${id}" aria-labelledby="`));
      expect(positions.every((position) => position > page.body.indexOf('</nav>'))).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      // Each section is named by its heading, which says what the contents list says.
      for (const [index, id] of ORDER.entries()) {
        const heading = /aria-labelledby="([a-z-]+)">\n<h2 id="([a-z-]+)">([^<]+)<\/h2>/.exec(
          section(page.body, id),
        );
        expect(heading?.[1]).toBe(heading?.[2]);
        expect(unescapeHtml(heading?.[3] ?? '')).toBe(names[index]);
      }
    }
  });

  it('signs out from the top of the page, before the sections', async () => {
    const page = await (await accountOf()).get('/account');
    const signout = page.body.indexOf('<form method="post" action="/signout"');
    expect(signout).toBeGreaterThan(page.body.indexOf('<h1>'));
    expect(signout).toBeLessThan(page.body.indexOf('<nav class="contents"'));
  });

  it('shows the username and display name under Profile, with the link to the profile page', async () => {
    const browser = await accountOf({ username: 'sections_profile', displayName: 'Profile Person' });
    const profile = section((await browser.get('/account')).body, 'profile');
    expect(profile).toContain('<dd>@sections_profile</dd>');
    expect(profile).toContain('<dd>Profile Person</dd>');
    expect(profile).toContain('<a href="/account/profile">Change your display name and avatar</a>');
    // No avatar set: no picture.
    expect(profile).not.toContain('<img');
  });

  it('shows the avatar small when set: a path of this service under the page’s own CSP', async () => {
    const browser = await accountOf();
    await browser.submit('/account/profile', '/account/profile', {
      display_name: '',
      avatar_url: '/static/default-avatar.png',
    });
    const page = await browser.get('/account');
    expect(section(page.body, 'profile')).toContain(
      '<img class="avatar" src="/static/default-avatar.png" alt="Your avatar" width="48" height="48">',
    );
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data:;");
  });

  it('shows an avatar from another host, whose origin alone the CSP of this page then admits', async () => {
    const browser = await accountOf();
    const saved = await browser.submit('/account/profile', '/account/profile', {
      display_name: '',
      avatar_url: 'https://img.example/avatars/me.png?size=96',
    });
    expect(saved.statusCode).toBe(303);
    const page = await browser.get('/account');
    expect(section(page.body, 'profile')).toContain(
      '<img class="avatar" src="https://img.example/avatars/me.png?size=96" alt="Your avatar"',
    );
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("img-src 'self' data: https://img.example;");
    expect(csp).toContain("script-src 'self';");
    // Other pages keep the strict policy.
    const other = await browser.get('/account/profile');
    expect(other.headers['content-security-policy']).toContain("img-src 'self' data:;");
  });

  it('shows the e-mail address and whether it is confirmed, with the link to change it', async () => {
    const confirmed = section(
      (await (await accountOf({ email: 'kept@example.com', emailVerified: true })).get('/account')).body,
      'email',
    );
    expect(confirmed).toContain('<dd>kept@example.com</dd>');
    expect(confirmed).toContain('<dd class="confirmed">Confirmed</dd>');
    expect(confirmed).toContain('<a href="/account/email">Change e-mail</a>');

    const browser = await accountOf({ email: 'new@example.com', emailVerified: false });
    const unconfirmed = section((await browser.get('/account')).body, 'email');
    expect(unconfirmed).toContain('<dd>new@example.com</dd>');
    expect(unconfirmed).toContain('<dd class="unconfirmed">Not confirmed</dd>');
    const russian = section((await browser.get('/account?lang=ru')).body, 'email');
    expect(russian).toContain('<dd class="unconfirmed">Не подтверждён</dd>');
    expect(russian).toContain('<a href="/account/email">Изменить адрес</a>');
  });

  it('says so when the account has no e-mail address, and links to add one', async () => {
    const email = section((await (await accountOf({ bare: true })).get('/account')).body, 'email');
    expect(email).toContain('<p>Your account has no e-mail address.</p>');
    expect(email).toContain('<a href="/account/email">Add an e-mail address</a>');
    expect(email).not.toContain('<dl');
  });

  it('has the password and two-step sign-in entries under Password & security, and nothing announced for later', async () => {
    const security = section((await (await accountOf()).get('/account')).body, 'security');
    expect(security).toContain('<a href="/account/password">Change your password</a>');
    expect(security).toContain('<a href="/account/security">Two-step sign-in and recovery codes</a>');
    expect(security.match(/<p>/g)).toHaveLength(2);
  });
});
