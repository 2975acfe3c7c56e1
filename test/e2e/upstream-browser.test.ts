import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcStandIn } from '../helpers/upstream/oidc-standin.js';
import {
  checkPage,
  clickTo,
  mainText,
  openUpstreamStage,
  problemsOf,
  providerButtonTexts,
  tabTo,
  type UpstreamStage,
  urlPath,
} from './helpers/upstream-stage.js';

/**
 * Sign-in through other providers as people live it in Chromium, against the real server process
 * with three providers an operator added with `idp providers add`, each a stand-in on 127.0.0.1:
 * the buttons on the sign-in and sign-up pages (axe-clean in the light and the dark scheme, at
 * 390 px and on a desktop, reached by Tab and started by Enter), a first sign-in that asks for a
 * username and makes the account, a later one straight into it, an existing account's matching
 * address never joined (the username page instead) and linked only after its password, Sign in with
 * Apple's form_post page posting back cross-site, and a provider down or answering garbage said on a
 * page that names it; in English and in Russian. The tests run in order and build on each other.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
/** A test that runs axe-core on several pages at two widths, on a busy machine. */
const AXE_STORY_MS = 120_000;
const STORY_MS = 60_000;

/** An account of this service with the address the provider's "twin" account also has, verified. */
const existing = {
  username: 'ada_existing',
  password: 'a password of her own, long',
  email: 'ada@example.org',
};

let stage: UpstreamStage;
let base: string;

const continueWith = (name: string) => `button[data-provider="${name}"]`;

describe.skipIf(skipBrowserTests)('sign-in through other providers, in Chromium', () => {
  beforeAll(async () => {
    stage = await openUpstreamStage({
      oidc: {
        grace: {
          sub: 'sub-grace',
          preferred_username: 'grace_h',
          name: 'Grace Hopper',
          email: 'grace@example.org',
          email_verified: true,
        },
        twin: { sub: 'sub-twin', preferred_username: 'ada', email: existing.email, email_verified: true },
        olga: { sub: 'sub-olga', preferred_username: 'olga_k', name: 'Ольга' },
      },
      github: {},
      apple: {
        tim: {
          sub: '001234.0123456789abcdef.0123',
          email: 'tim@privaterelay.example',
          firstName: 'Tim',
          lastName: 'Cook',
        },
      },
    });
    base = stage.base;
    await stage.idp([
      'users',
      'create',
      '--username',
      existing.username,
      '--password',
      existing.password,
      '--email',
      existing.email,
      '--email-verified',
    ]);
  }, 180_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('shows a button per provider on the sign-in and sign-up pages, with its name and mark, in English and Russian', {
    timeout: AXE_STORY_MS,
  }, async () => {
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    expect(await providerButtonTexts(page)).toEqual([
      'Continue with Example ID',
      'Continue with GitHub',
      'Continue with Apple',
    ]);
    // Each mark is decorative: the button's text names the provider.
    for (const name of ['example', 'github', 'apple']) {
      const mark = page.locator(`${continueWith(name)} svg.provider-mark`);
      expect(await mark.getAttribute('aria-hidden'), name).toBe('true');
      expect(await mark.isVisible(), name).toBe(true);
    }
    await checkPage(page, 'sign-in', { photo: 'signin-providers-en' });

    await page.goto(`${base}/signup`);
    expect(await providerButtonTexts(page)).toEqual([
      'Continue with Example ID',
      'Continue with GitHub',
      'Continue with Apple',
    ]);
    await checkPage(page, 'sign-up');

    await page.goto(`${base}/signin?lang=ru`);
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    expect(await providerButtonTexts(page)).toEqual([
      'Войти через Example ID',
      'Войти через GitHub',
      'Войти через Apple',
    ]);
    expect(await page.locator('.divider + .providers').isVisible()).toBe(true);
    expect(await page.locator('.divider:has(+ .providers)').textContent()).toBe('или');
    await checkPage(page, 'sign-in ru', { photo: 'signin-providers-ru' });
    await page.goto(`${base}/signup?lang=ru`);
    expect(await providerButtonTexts(page)).toEqual([
      'Войти через Example ID',
      'Войти через GitHub',
      'Войти через Apple',
    ]);
    await checkPage(page, 'sign-up ru');
    expect(problemsOf(log)).toEqual([]);
  });

  it('signs up by keyboard alone: Tab reaches "Continue with Example ID", Enter goes through the provider to "Almost there", the suggested username makes the account', {
    timeout: AXE_STORY_MS,
  }, async () => {
    stage.oidc.nextAccount = 'grace';
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    expect(await tabTo(page, continueWith('example'))).toBe('Continue with Example ID');
    await Promise.all([page.waitForURL(urlPath('/signin/providers/continue')), page.keyboard.press('Enter')]);
    // Through the provider and back: its authorization endpoint was the browser's, not ours.
    expect(log.documents.some((document) => document.url.startsWith(`${stage.oidc.url}/`))).toBe(true);
    expect(await page.locator('h1').textContent()).toBe('Almost there');
    const text = await mainText(page);
    expect(text).toContain('You signed in at Example ID as grace_h.');
    expect(text).toContain('Your address grace@example.org comes with it, as confirmed by the provider.');
    expect(await page.locator('#username').inputValue()).toBe('grace_h');
    await checkPage(page, 'username page', { photo: 'upstream-continue-en' });
    // No account yet: nothing is made before the username is chosen.
    const other = await stage.person();
    await other.page.goto(`${base}/account`);
    expect(new URL(other.page.url()).pathname).toBe('/signin');

    expect(await tabTo(page, 'form[action="/signin/providers/continue"] button[type="submit"]')).toBe(
      'Create my account',
    );
    await Promise.all([page.waitForURL(urlPath('/account')), page.keyboard.press('Enter')]);
    expect(await page.locator('h1').textContent()).toBe('Your account');
    expect(await mainText(page)).toContain('@grace_h');
    expect(problemsOf(log)).toEqual([]);
  });

  it('signs the same person in later, in a new browser, straight to the account', {
    timeout: STORY_MS,
  }, async () => {
    stage.oidc.nextAccount = 'grace';
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    await clickTo(page, continueWith('example'), '/account');
    expect(await mainText(page)).toContain('@grace_h');
    expect(log.documents.map((document) => new URL(document.url).pathname)).not.toContain(
      '/signin/providers/continue',
    );
    expect(problemsOf(log)).toEqual([]);
  });

  it('never joins an account by a matching address: the username page, not the account with that address; linked only after its password', {
    timeout: AXE_STORY_MS,
  }, async () => {
    stage.oidc.nextAccount = 'twin';
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    await clickTo(page, continueWith('example'), '/signin/providers/continue');
    expect(await page.locator('h1').textContent()).toBe('Almost there');
    expect(await mainText(page)).toContain('You signed in at Example ID as ada.');
    // Not signed in to the account that has the address.
    await page.goto(`${base}/account`);
    expect(new URL(page.url()).pathname).toBe('/signin');

    // "Sign in and link": the account's own sign-in first, then the question.
    await page.goto(`${base}/signin/providers/continue`);
    await clickTo(page, 'a[href="/signin/providers/link"]', '/signin');
    await page.locator('#username').fill(existing.username);
    await page.locator('#password').fill(existing.password);
    await clickTo(page, 'form[action="/signin"] button[type="submit"]', '/signin/providers/link');
    expect(await page.locator('h1').textContent()).toBe('Link this sign-in?');
    expect(await mainText(page)).toContain(
      `Link the Example ID account ada to your account @${existing.username}? You will then be able to sign in with either.`,
    );
    await checkPage(page, 'link question', { photo: 'upstream-link-en' });
    await clickTo(page, 'form[action="/signin/providers/link"] button[type="submit"]', '/account/security');
    expect(new URL(page.url()).search).toBe('?providers=linked');
    expect(await page.locator('#providers [role="status"]').textContent()).toBe(
      'Linked. You can now sign in with it.',
    );

    // Later, in another browser: the provider leads into that account.
    const later = await stage.person();
    await later.page.goto(`${base}/signin`);
    await clickTo(later.page, continueWith('example'), '/account');
    expect(await mainText(later.page)).toContain(`@${existing.username}`);
    expect([...problemsOf(log), ...problemsOf(later.log)]).toEqual([]);
  });

  it('signs in with Apple: its page posts back to the callback from another site, and a later sign-in goes straight in', {
    timeout: STORY_MS,
  }, async () => {
    stage.apple.nextAccount = 'tim';
    const { page, log } = await stage.person();
    await page.goto(`${base}/signin`);
    await clickTo(page, continueWith('apple'), '/signin/providers/continue');
    // Apple's answer was a page (form_post) that posted to the callback, which sent the browser on
    // with a GET carrying its cookies.
    const atApple = log.documents.find((document) => document.url.startsWith(`${stage.apple.url}/`));
    expect(atApple?.status).toBe(200);
    const callback = `${base}/signin/providers/apple/callback`;
    expect(
      log.documents.filter((document) => document.url.startsWith(callback)).map((d) => d.status),
    ).toEqual([303, 303]);
    // The name comes from Apple's first answer only.
    expect(await mainText(page)).toContain('You signed in at Apple as Tim Cook.');
    await page.locator('#username').fill('tim_c');
    await clickTo(page, 'form[action="/signin/providers/continue"] button[type="submit"]', '/account');
    expect(await mainText(page)).toContain('@tim_c');
    expect(await mainText(page)).toContain('tim@privaterelay.example');

    const later = await stage.person();
    await later.page.goto(`${base}/signin`);
    await clickTo(later.page, continueWith('apple'), '/account');
    expect(await mainText(later.page)).toContain('@tim_c');
    expect([...problemsOf(log), ...problemsOf(later.log)]).toEqual([]);
  });

  it('signs up in Russian: "Войти через Example ID", "Почти готово", then the account', {
    timeout: AXE_STORY_MS,
  }, async () => {
    stage.oidc.nextAccount = 'olga';
    const { page, log } = await stage.person('ru-RU');
    await page.goto(`${base}/signin`);
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    expect(await tabTo(page, continueWith('example'))).toBe('Войти через Example ID');
    await Promise.all([page.waitForURL(urlPath('/signin/providers/continue')), page.keyboard.press('Enter')]);
    expect(await page.locator('h1').textContent()).toBe('Почти готово');
    const text = await mainText(page);
    expect(text).toContain('Вы вошли в Example ID как olga_k.');
    expect(text).toContain('Уже есть аккаунт здесь?');
    expect(await page.locator('a[href="/signin/providers/link"]').textContent()).toBe('Войти и привязать');
    expect(await page.locator('#username').inputValue()).toBe('olga_k');
    await checkPage(page, 'username page ru', { photo: 'upstream-continue-ru' });
    // A taken username is refused beside the field, in Russian.
    await page.locator('#username').fill('grace_h');
    await clickTo(
      page,
      'form[action="/signin/providers/continue"] button[type="submit"]',
      '/signin/providers/continue',
    );
    expect(await page.locator('#username-error').textContent()).toBe(
      'Это имя занято (или слишком похоже на занятое). Выберите другое.',
    );
    expect(await page.locator('#username').getAttribute('aria-invalid')).toBe('true');
    await checkPage(page, 'username refused ru');
    await page.locator('#username').fill('olga_k');
    expect(
      await page.locator('form[action="/signin/providers/continue"] button[type="submit"]').textContent(),
    ).toBe('Создать аккаунт');
    await clickTo(page, 'form[action="/signin/providers/continue"] button[type="submit"]', '/account');
    expect(await page.locator('h1').textContent()).toBe('Ваш аккаунт');
    expect(await mainText(page)).toContain('@olga_k');
    expect(problemsOf(log)).toEqual([]);
  });

  it('names a provider that is down, and one that answers garbage, and offers to try again or sign in another way', {
    timeout: AXE_STORY_MS,
  }, async () => {
    // A provider whose server is gone: its address refuses connections.
    const gone = await startOidcStandIn({
      clientId: 'c',
      clientSecret: 'gone-secret-0123456789',
      accounts: {},
    });
    await gone.stop();
    await stage.idp([
      'providers',
      'add',
      'down',
      '--kind',
      'oidc',
      '--display-name',
      'Down ID',
      '--issuer',
      gone.url,
      '--client-id',
      'c',
      '--client-secret',
      'gone-secret-0123456789',
    ]);
    try {
      const { page, log } = await stage.person();
      await page.goto(`${base}/signin`);
      expect(await providerButtonTexts(page)).toContain('Continue with Down ID');
      const [problem] = await Promise.all([
        page.waitForResponse((response) => new URL(response.url()).pathname === '/signin/providers/down'),
        page.locator(continueWith('down')).click(),
      ]);
      expect(problem.status()).toBe(502);
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('Signing in with Down ID did not work');
      expect(await page.locator('[role="alert"]').textContent()).toBe(
        'Down ID did not answer. It may be down for a moment: try again in a few minutes, or sign in another way.',
      );
      expect(await page.locator('.actions a').allTextContents()).toEqual([
        'Try again',
        'Sign in another way',
      ]);
      await checkPage(page, 'provider down', { photo: 'upstream-problem-en' });
      await clickTo(page, 'a:has-text("Sign in another way")', '/signin');

      // Garbage from the token endpoint (a proxy's page): the callback says so, naming the provider.
      stage.oidc.nextAccount = 'grace';
      stage.oidc.misbehave('garbage');
      await clickTo(page, continueWith('example'), '/signin/providers/example/callback');
      expect(await page.locator('h1').textContent()).toBe('Signing in with Example ID did not work');
      expect(await page.locator('[role="alert"]').textContent()).toContain(
        'Example ID answered something we could not check, so we did not sign you in.',
      );
      await checkPage(page, 'provider garbage');
      // Fixed at the provider: "Try again" goes back, and this time it works.
      stage.oidc.misbehave(null);
      await clickTo(page, 'a:has-text("Try again")', '/signin');
      await clickTo(page, continueWith('example'), '/account');
      expect(await mainText(page)).toContain('@grace_h');

      const ru = await stage.person('ru-RU');
      await ru.page.goto(`${base}/signin`);
      await clickTo(ru.page, continueWith('down'), '/signin/providers/down');
      expect(await ru.page.locator('h1').textContent()).toBe('Не удалось войти через Down ID');
      expect(await ru.page.locator('[role="alert"]').textContent()).toContain('Down ID не отвечает.');
      expect(await ru.page.locator('.actions a').allTextContents()).toEqual([
        'Попробовать ещё раз',
        'Войти другим способом',
      ]);
      await checkPage(ru.page, 'provider down ru', { photo: 'upstream-problem-ru' });
      expect([...problemsOf(log), ...problemsOf(ru.log)]).toEqual([]);
    } finally {
      stage.oidc.misbehave(null);
      await stage.idp(['providers', 'remove', 'down']);
    }
  });
});
