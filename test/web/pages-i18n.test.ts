import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFound, ServerError, Unavailable } from '../../src/lib/errors.js';
import { saveConsent } from '../../src/modules/oauth/consents.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, hiddenFields, unescapeHtml } from '../helpers/browser.js';
import { makeClient, makeUser } from '../helpers/factories.js';
import { authorizeUrl } from '../helpers/http.js';

/**
 * The pages' languages through HTTP: how a request's language is chosen (Accept-Language, the
 * `lang` cookie, the `?lang=` switch), the headers that say it, and every page in Russian.
 */
let t: TestApp;
let client: { clientId: string; redirectUri: string };

beforeAll(async () => {
  t = await createTestApp();
  client = await makeClient(t);
  const alice = await makeUser(t, {
    username: 'alice',
    password: 'correct horse battery',
    email: 'alice@example.com',
    bare: true,
  });
  const pk = await t.database.db
    .selectFrom('clients')
    .select('id')
    .where('client_id', '=', client.clientId)
    .executeTakeFirstOrThrow();
  await saveConsent(t.database.db, {
    userId: alice.id,
    clientPk: pk.id,
    scopes: ['openid', 'profile'],
    at: new Date('2026-05-20T10:00:00Z'),
  });
  // The error handler's pages for the statuses that no page route answers by itself.
  for (const [path, error] of [
    ['/test/page-500', () => new ServerError()],
    ['/test/page-503', () => new Unavailable()],
    ['/test/page-404', () => new NotFound('No such thing.')],
  ] as const) {
    t.app.get(path, { config: { auth: 'browser', description: 'test probe' } }, async () => {
      throw error();
    });
  }
});
afterAll(() => t.close());

function get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers });
}

const htmlLang = (res: LightMyRequestResponse) => /<html lang="([^"]*)">/.exec(res.body)?.[1];
const h1 = (res: LightMyRequestResponse) => unescapeHtml(/<h1>([^<]*)<\/h1>/.exec(res.body)?.[1] ?? '');
const switchHref = (res: LightMyRequestResponse, locale: string) =>
  unescapeHtml(new RegExp(`<a href="([^"]*)" hreflang="${locale}"`).exec(res.body)?.[1] ?? '');
const langCookie = (res: LightMyRequestResponse) => res.cookies.find((cookie) => cookie.name === 'lang');

async function signedIn(): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn({ username: 'alice', password: 'correct horse battery' });
  return browser;
}

describe('choosing the language', () => {
  it('is English without Accept-Language, and says so in the headers', async () => {
    const res = await get('/signin');
    expect(res.statusCode).toBe(200);
    expect(htmlLang(res)).toBe('en');
    expect(res.headers['content-language']).toBe('en');
    expect(res.headers.vary).toBe('Accept-Language, Cookie');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(h1(res)).toBe('Sign in');
    expect(langCookie(res)).toBeUndefined();
  });

  it.each([
    ['ru', 'ru'],
    ['ru-RU', 'ru'],
    ['ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7', 'ru'],
    ['en-US,en;q=0.9,ru;q=0.8', 'en'],
    ['de-DE, ru;q=0.5', 'ru'],
    ['de-DE,de;q=0.9', 'en'],
    ['ru;q=0, en;q=0.5', 'en'],
    ['zz', 'en'],
  ])('follows Accept-Language %j → %s', async (header, locale) => {
    const res = await get('/signin', { 'accept-language': header });
    expect(htmlLang(res)).toBe(locale);
    expect(res.headers['content-language']).toBe(locale);
    expect(h1(res)).toBe(locale === 'ru' ? 'Вход' : 'Sign in');
  });

  it('honours the lang cookie before Accept-Language, and ignores an invalid one', async () => {
    expect(htmlLang(await get('/signin', { cookie: 'lang=ru', 'accept-language': 'en' }))).toBe('ru');
    expect(htmlLang(await get('/signin', { cookie: 'lang=en', 'accept-language': 'ru' }))).toBe('en');
    expect(htmlLang(await get('/signin', { cookie: 'lang=de', 'accept-language': 'ru' }))).toBe('ru');
    expect(htmlLang(await get('/signin', { cookie: 'lang=%3Cb%3E', 'accept-language': 'en' }))).toBe('en');
  });

  it('switches with ?lang=, remembering the choice in a harmless cookie', async () => {
    const res = await get('/signin?lang=ru', { 'accept-language': 'en' });
    expect(htmlLang(res)).toBe('ru');
    expect(res.headers['content-language']).toBe('ru');
    expect(langCookie(res)).toMatchObject({ value: 'ru', path: '/', sameSite: 'Lax', httpOnly: true });
    expect(langCookie(res)?.maxAge).toBeGreaterThan(0);

    // ?lang= wins over the cookie too, and changes it.
    const back = await get('/signin?lang=en', { cookie: 'lang=ru', 'accept-language': 'ru' });
    expect(htmlLang(back)).toBe('en');
    expect(langCookie(back)?.value).toBe('en');
    // The cookie already says it: nothing to set.
    expect(langCookie(await get('/signin?lang=ru', { cookie: 'lang=ru' }))).toBeUndefined();
  });

  it('remembers the choice on a page whose route read the language before rendering (the security page)', async () => {
    const browser = await signedIn();
    const res = await browser.get('/account/security?lang=ru');
    expect(res.statusCode).toBe(200);
    expect(htmlLang(res)).toBe('ru');
    expect(langCookie(res)).toMatchObject({ value: 'ru', path: '/' });
    // Set once: one Set-Cookie for it.
    expect(res.cookies.filter((cookie) => cookie.name === 'lang')).toHaveLength(1);
    expect(htmlLang(await browser.get('/account'))).toBe('ru');
  });

  it('makes the language cookie Secure when PUBLIC_URL is https, as the other cookies', async () => {
    expect(langCookie(await get('/signin?lang=ru'))?.secure).toBeFalsy();
    const https = await createTestApp({ env: { PUBLIC_URL: 'https://id.example' } });
    try {
      // Behind a TLS proxy the request itself arrives over plain http.
      const res = await https.app.inject({ method: 'GET', url: '/signin?lang=ru' });
      expect(langCookie(res)).toMatchObject({ value: 'ru', secure: true });
    } finally {
      await https.close();
    }
  });

  it.each(['de', 'RU', '', 'ru-RU', '%3Cscript%3E'])('ignores ?lang=%s', async (value) => {
    const res = await get(`/signin?lang=${value}`, { 'accept-language': 'ru' });
    expect(res.statusCode).toBe(200);
    expect(htmlLang(res)).toBe('ru');
    expect(langCookie(res)).toBeUndefined();
  });

  it('keeps the language in a browser from page to page', async () => {
    const browser = new Browser(t.app);
    await browser.get('/signin?lang=ru');
    expect(browser.cookies.get('lang')).toBe('ru');
    expect(htmlLang(await browser.get('/signup'))).toBe('ru');
  });
});

describe('the language switch', () => {
  it('links to the page itself in each language, keeping its other parameters', async () => {
    const res = await get('/signin?request=abc_DEF&return_to=%2Faccount');
    const ru = new URL(switchHref(res, 'ru'), 'http://x');
    expect(ru.pathname).toBe('/signin');
    expect(Object.fromEntries(ru.searchParams)).toEqual({
      request: 'abc_DEF',
      return_to: '/account',
      lang: 'ru',
    });
    expect(res.body).toMatch(/<nav class="language-switch" aria-label="Language">/);
    expect(res.body).toContain('lang="ru">Русский</a>');
    expect(res.body).toMatch(/hreflang="en" lang="en" aria-current="true">English<\/a>/);

    // Switching back from Russian replaces the parameter rather than adding another.
    const again = await get(`${ru.pathname}${ru.search}`);
    const en = new URL(switchHref(again, 'en'), 'http://x');
    expect(en.searchParams.getAll('lang')).toEqual(['en']);
    expect(en.searchParams.get('request')).toBe('abc_DEF');
  });

  it('leads from a page answering a POST back to its form, with the flow', async () => {
    const browser = new Browser(t.app);
    const form = await browser.get('/signin?request=abc_DEF&lang=ru');
    const res = await browser.post('/signin', {
      ...hiddenFields(form.body, '/signin'),
      username: 'alice',
      password: 'wrong password',
    });
    expect(res.statusCode).toBe(401);
    expect(htmlLang(res)).toBe('ru');
    expect(res.body).toContain('Неверное имя пользователя или пароль.');
    expect(switchHref(res, 'en')).toBe('/signin?request=abc_DEF&lang=en');

    const signup = await browser.post('/signup', {
      ...hiddenFields((await browser.get('/signup')).body, '/signup'),
      username: 'x',
      password: 'a long enough password',
    });
    expect(switchHref(signup, 'en')).toBe('/signup?lang=en');
  });

  it('leads from the consent page to its own request, not a new one', async () => {
    const browser = await signedIn();
    const consent = await browser.get(authorizeUrl(client, { scope: 'openid profile email', state: 's' }));
    expect(consent.statusCode).toBe(200);
    const requestId = hiddenFields(consent.body, '/api/v1/oauth/authorize/decision').request as string;
    const href = switchHref(consent, 'ru');
    expect(href).toBe(`/api/v1/oauth/authorize/resume?request=${requestId}&lang=ru`);

    const russian = await browser.get(href);
    expect(russian.statusCode).toBe(200);
    expect(htmlLang(russian)).toBe('ru');
    expect(hiddenFields(russian.body, '/api/v1/oauth/authorize/decision').request).toBe(requestId);
  });
});

describe('every page in Russian', () => {
  const ru = { 'accept-language': 'ru-RU,ru;q=0.9' };

  it('sign-in', async () => {
    const res = await get('/signin', ru);
    expect(h1(res)).toBe('Вход');
    expect(res.body).toContain('<title>Вход · idp</title>');
    expect(res.body).toContain('<label for="username">Имя пользователя</label>');
    expect(res.body).toContain('<label for="password">Пароль</label>');
    expect(res.body).toMatch(/<button type="submit" class="button primary wide">Войти<\/button>/);
    expect(res.body).toContain('Создать аккаунт</a>');
    expect(res.body).toContain('Перейти к содержимому');
    expect(res.body).toMatch(/aria-label="Язык"/);
  });

  it('sign-in errors', async () => {
    const browser = new Browser(t.app);
    browser.cookies.set('lang', 'ru');
    const res = await browser.submit('/signin', '/signin', { username: 'alice', password: '' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(
      '<p class="alert" role="alert" id="signin-error">Введите имя пользователя и пароль.</p>',
    );
    expect(res.body).toMatch(/id="password"[^>]*aria-describedby="signin-error" aria-invalid="true"/);
  });

  it('sign-up, with its field errors', async () => {
    const page = await get('/signup', ru);
    expect(h1(page)).toBe('Создание аккаунта');
    expect(page.body).toContain('Электронная почта <span class="optional">(необязательно)</span>');
    expect(page.body).toContain('Не менее 8 символов и не из 10\u00a0000 самых распространённых паролей');

    const browser = new Browser(t.app);
    browser.cookies.set('lang', 'ru');
    const res = await browser.submit('/signup', '/signup', {
      username: 'Admin',
      password: 'short',
      email: 'not-an-email',
    });
    expect(res.statusCode).toBe(400);
    const error = (field: string) =>
      unescapeHtml(
        new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(res.body)?.[1] ?? '',
      );
    expect(error('username')).toBe('Это имя зарезервировано, выберите другое.');
    expect(error('password')).toBe('Пароль должен быть не короче 8 символов.');
    expect(error('email')).toBe('Введите правильный адрес электронной почты или оставьте поле пустым.');
    expect(res.body).toContain('Исправьте отмеченные ниже поля.');
  });

  it('sign-up errors in English name each problem', async () => {
    const res = await new Browser(t.app).submit('/signup', '/signup', {
      username: 'bob',
      password: 'x'.repeat(300),
      email: `${'a'.repeat(250)}@example.com`,
    });
    expect(res.body).toContain('Password must be at most 256 characters.');
    expect(res.body).toContain('The e-mail address must be at most 254 characters.');
    const taken = await new Browser(t.app).submit('/signup', '/signup', {
      username: 'ALICE',
      password: 'a long enough password',
    });
    expect(taken.body).toContain('This username is already taken; choose another one.');
  });

  it('account, with counts and dates in Russian', async () => {
    const browser = await signedIn();
    browser.cookies.set('lang', 'ru');
    const res = await browser.get('/account?notice=revoked');
    expect(res.statusCode).toBe(200);
    expect(htmlLang(res)).toBe('ru');
    expect(h1(res)).toBe('Ваш аккаунт');
    expect(res.body).toContain('Доступ отозван.');
    expect(res.body).toContain('Доступ к аккаунту есть у 1 приложения.');
    expect(res.body).toContain('<li>Подтверждение вашей личности (вход на сайт)</li>');
    expect(res.body).toContain('<time datetime="2026-05-20T10:00:00.000Z">20 мая 2026 г.</time>');
    expect(res.body).toContain(
      'Отозвать доступ<span class="visually-hidden"> у приложения «Test Site»</span>',
    );
    expect(res.body).toContain('Вы не вошли в мобильное приложение ни на одном устройстве.');
    expect(res.body).toMatch(/<button type="submit" class="button">Выйти<\/button>/);
    expect(switchHref(res, 'en')).toBe('/account?notice=revoked&lang=en');
  });

  it('consent', async () => {
    const browser = await signedIn();
    browser.cookies.set('lang', 'ru');
    const res = await browser.get(
      authorizeUrl(client, { scope: 'openid profile email offline_access', state: 's' }),
    );
    expect(res.statusCode).toBe(200);
    expect(h1(res)).toBe('Разрешить «Test Site» доступ к вашему аккаунту?');
    expect(res.body).toContain('<title>Разрешить доступ? · idp</title>');
    expect(res.body).toContain(
      '<label for="share_email">Адрес электронной почты и отметка о том, подтверждён ли он</label>',
    );
    expect(res.body).toContain('Доступ, даже когда вы не на сайте');
    expect(res.body).toMatch(
      /<button type="submit" name="decision" value="allow" class="button primary">Разрешить<\/button>/,
    );
    expect(res.body).toMatch(
      /<button type="submit" name="decision" value="deny" class="button">Отклонить<\/button>/,
    );
  });

  it('the authorize error page: the title and explanation translated, the technical detail kept', async () => {
    const res = await get('/api/v1/oauth/authorize?client_id=pk_unknown&response_type=code', ru);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-language']).toBe('ru');
    expect(h1(res)).toBe('Ссылка для входа недействительна');
    expect(res.body).toContain('Вернитесь на сайт');
    expect(res.body).toMatch(/Технические подробности: <span lang="en">[^<]+<\/span>/);
    // The id a person can quote to support is the response's X-Request-Id, also in the log line.
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toContain(
      `Если будете писать в поддержку, укажите номер запроса: <code>${res.headers['x-request-id']}</code>`,
    );
    const english = await get('/api/v1/oauth/authorize?client_id=pk_unknown&response_type=code');
    expect(english.body).toContain(
      `If you contact support, quote this request id: <code>${english.headers['x-request-id']}</code>`,
    );
  });

  it('the expired form page', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/signout',
      headers: { ...ru, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'csrf_token=x',
    });
    expect(res.statusCode).toBe(403);
    expect(h1(res)).toBe('Срок действия формы истёк');
    expect(switchHref(res, 'en')).toBe('/account?lang=en');
  });

  it('the expired request page, in both languages', async () => {
    expect(h1(await get('/api/v1/oauth/authorize/resume?request=nope', ru))).toBe(
      'Срок действия запроса истёк',
    );
    expect(h1(await get('/api/v1/oauth/authorize/resume?request=nope'))).toBe('This request has expired');
  });

  it.each([
    ['/test/page-500', 500, 'Что-то пошло не так', 'Something went wrong'],
    ['/test/page-503', 503, 'Сервис временно недоступен', 'Temporarily unavailable'],
    ['/test/page-404', 404, 'Страница не найдена', 'Not found'],
  ])('the error handler’s page for %s', async (url, status, russian, english) => {
    const res = await get(url, ru);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-language']).toBe('ru');
    expect(htmlLang(res)).toBe('ru');
    expect(h1(res)).toBe(russian);
    expect(h1(await get(url))).toBe(english);
  });

  it('leaves the API reference in English, without a switch', async () => {
    const res = await get('/api/v1/docs', ru);
    expect(htmlLang(res)).toBe('en');
    expect(res.headers['content-language']).toBe('en');
    expect(res.body).not.toContain('language-switch');
  });
});

describe('the 429 page', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_SIGNIN_PER_MIN: '1' } });
  });
  afterAll(() => limited.close());

  it('says in the reader’s language when to try again, with the right plural', async () => {
    const signIn = (headers: Record<string, string>) =>
      limited.app.inject({
        method: 'POST',
        url: '/signin',
        remoteAddress: '203.0.113.9',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'username=someone&password=x&csrf_token=x',
      });
    await signIn({});
    const res = await signIn({ 'accept-language': 'ru' });
    expect(res.statusCode).toBe(429);
    expect(h1(res)).toBe('Слишком много попыток');
    const seconds = Number(res.headers['retry-after']);
    const word = new Intl.PluralRules('ru').select(seconds);
    const forms: Record<string, string> = {
      one: 'секунду',
      few: 'секунды',
      many: 'секунд',
      other: 'секунды',
    };
    expect(res.body).toContain(`Попробовать снова можно через ${seconds} ${forms[word]}.`);

    const english = await signIn({});
    expect(h1(english)).toBe('Too many attempts');
    expect(english.body).toMatch(/You can try again in \d+ seconds?\./);
  });
});
