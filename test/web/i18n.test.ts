import { describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/modules/oauth/scopes.js';
import {
  CATALOGUES,
  formatDate,
  LOCALES,
  localeFromAcceptLanguage,
  type Messages,
  negotiateLocale,
  parseAcceptLanguage,
  plural,
} from '../../src/web/i18n/index.js';
import { withLocale } from '../../src/web/pages.js';

describe('Accept-Language', () => {
  it('is parsed into ranges by weight, in header order among equal weights', () => {
    expect(parseAcceptLanguage('ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7')).toEqual([
      { range: 'ru-ru', q: 1 },
      { range: 'ru', q: 0.9 },
      { range: 'en-us', q: 0.8 },
      { range: 'en', q: 0.7 },
    ]);
    expect(parseAcceptLanguage('en;q=0.5, ru ; q=0.8, de')).toEqual([
      { range: 'de', q: 1 },
      { range: 'ru', q: 0.8 },
      { range: 'en', q: 0.5 },
    ]);
  });

  it('drops q=0, malformed weights and malformed ranges', () => {
    expect(parseAcceptLanguage('ru;q=0, en;q=0.000')).toEqual([]);
    expect(parseAcceptLanguage('ru;q=2, ru;q=abc, ru;q=0.1234, r!u, en')).toEqual([{ range: 'en', q: 1 }]);
    expect(parseAcceptLanguage('')).toEqual([]);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
  });

  it.each([
    [undefined, 'en'],
    ['', 'en'],
    ['ru', 'ru'],
    ['ru-RU', 'ru'],
    ['RU-ru', 'ru'],
    ['ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7', 'ru'],
    ['en-US,en;q=0.9,ru;q=0.8', 'en'],
    ['de-DE,de;q=0.9', 'en'],
    ['de-DE, ru;q=0.5', 'ru'],
    ['en;q=0.1, ru;q=0.9', 'ru'],
    ['ru;q=0, en;q=0.1', 'en'],
    ['ru;q=0', 'en'],
    ['*', 'en'],
    ['fr, *;q=0.5, ru;q=0.1', 'en'],
    ['russian', 'en'],
    ['ru;q=abc', 'en'],
  ] as const)('%j chooses %s', (header, locale) => {
    expect(localeFromAcceptLanguage(header)).toBe(locale);
  });
});

describe('the page language', () => {
  it('is the ?lang= choice first, remembered unless the cookie already holds it', () => {
    expect(negotiateLocale({ query: 'ru', acceptLanguage: 'en' })).toEqual({ locale: 'ru', remember: 'ru' });
    expect(negotiateLocale({ query: 'en', cookie: 'ru', acceptLanguage: 'ru' })).toEqual({
      locale: 'en',
      remember: 'en',
    });
    expect(negotiateLocale({ query: 'ru', cookie: 'ru' })).toEqual({ locale: 'ru' });
  });

  it('is then the cookie, then Accept-Language', () => {
    expect(negotiateLocale({ cookie: 'ru', acceptLanguage: 'en-US' })).toEqual({ locale: 'ru' });
    expect(negotiateLocale({ cookie: 'en', acceptLanguage: 'ru-RU' })).toEqual({ locale: 'en' });
    expect(negotiateLocale({ acceptLanguage: 'ru-RU' })).toEqual({ locale: 'ru' });
    expect(negotiateLocale({})).toEqual({ locale: 'en' });
  });

  it.each(['de', 'RU', 'ru-RU', '', ' ru', 'ru;', '__proto__', ['ru'], 42])(
    'ignores the invalid value %j in the query and the cookie',
    (value) => {
      expect(negotiateLocale({ query: value, acceptLanguage: 'ru' })).toEqual({ locale: 'ru' });
      expect(negotiateLocale({ query: value, cookie: value, acceptLanguage: 'en' })).toEqual({
        locale: 'en',
      });
    },
  );
});

describe('plural forms', () => {
  it('in English: one and other', () => {
    expect(plural('en', CATALOGUES.en.account.appsCount, 1)).toBe('1 app can use your account.');
    expect(plural('en', CATALOGUES.en.account.appsCount, 2)).toBe('2 apps can use your account.');
    expect(plural('en', CATALOGUES.en.errors.retryIn, 0)).toBe('You can try again in 0 seconds.');
  });

  it.each([
    [1, 'секунду'],
    [2, 'секунды'],
    [4, 'секунды'],
    [5, 'секунд'],
    [11, 'секунд'],
    [12, 'секунд'],
    [21, 'секунду'],
    [22, 'секунды'],
    [25, 'секунд'],
    [101, 'секунду'],
  ])('in Russian: %i %s', (count, word) => {
    expect(plural('ru', CATALOGUES.ru.errors.retryIn, count)).toBe(
      `Попробовать снова можно через ${count} ${word}.`,
    );
  });

  it('in Russian, for apps and devices', () => {
    const apps = (count: number) => plural('ru', CATALOGUES.ru.account.appsCount, count);
    expect(apps(1)).toBe('Доступ к аккаунту есть у 1 приложения.');
    expect(apps(3)).toBe('Доступ к аккаунту есть у 3 приложений.');
    expect(apps(21)).toBe('Доступ к аккаунту есть у 21 приложения.');
    const devices = (count: number) => plural('ru', CATALOGUES.ru.account.devicesCount, count);
    expect(devices(1)).toBe('Вход в мобильное приложение выполнен на 1 устройстве.');
    expect(devices(2)).toBe('Вход в мобильное приложение выполнен на 2 устройствах.');
    expect(devices(5)).toBe('Вход в мобильное приложение выполнен на 5 устройствах.');
  });
});

it('formats dates in each language, in UTC', () => {
  const date = new Date('2026-05-20T23:30:00Z');
  expect(formatDate('en', date)).toBe('20 May 2026');
  expect(formatDate('ru', date)).toBe('20 мая 2026 г.');
});

describe('the catalogues', () => {
  /** Every text of a catalogue, by its path ("signin.errors.wrong_credentials"). */
  function texts(value: unknown, at = ''): Array<[string, string]> {
    if (typeof value === 'string') return [[at, value]];
    if (typeof value === 'function') return [[at, String(value('X'))]];
    // Plural forms are one text: each language has its own set of forms.
    if (typeof value === 'object' && value !== null && 'other' in value)
      return [[at, Object.values(value).join(' | ')]];
    return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) =>
      texts(inner, at ? `${at}.${key}` : key),
    );
  }

  it('have the same texts in every language, none empty', () => {
    const english = texts(CATALOGUES.en);
    for (const locale of LOCALES) {
      const own = texts(CATALOGUES[locale]);
      expect(own.map(([at]) => at).sort(), locale).toEqual(english.map(([at]) => at).sort());
      for (const [at, text] of own) expect(text.trim(), `${locale}: ${at}`).not.toBe('');
    }
  });

  it('are translated: the Russian texts are in Cyrillic', () => {
    // Texts of punctuation alone (the full stop after a link) excepted.
    for (const [at, text] of texts(CATALOGUES.ru))
      if (/\p{L}/u.test(text)) expect(text, at).toMatch(/[а-яё]/i);
  });

  it('say in Russian what the buttons do, in the usual words', () => {
    expect(CATALOGUES.ru.signin.submit).toBe('Войти');
    expect(CATALOGUES.ru.signup.submit).toBe('Создать аккаунт');
    expect(CATALOGUES.ru.consent.allow).toBe('Разрешить');
    expect(CATALOGUES.ru.consent.deny).toBe('Отклонить');
  });

  it('describe every scope; the English texts are the scopes’ own descriptions', () => {
    for (const scope of Object.keys(SCOPES) as Scope[]) {
      expect(CATALOGUES.en.scopes[scope]).toBe(SCOPES[scope].description);
      expect(CATALOGUES.ru.scopes[scope]).toMatch(/[а-яё]/i);
    }
  });

  it('give Russian counts their one, few and many forms', () => {
    for (const forms of [
      CATALOGUES.ru.account.appsCount,
      CATALOGUES.ru.account.devicesCount,
      CATALOGUES.ru.errors.retryIn,
    ]) {
      expect(Object.keys(forms).sort()).toEqual(['few', 'many', 'one', 'other']);
    }
  });

  it('cannot miss a text: the type requires every one', () => {
    const { signin, ...withoutSignIn } = CATALOGUES.ru;
    // @ts-expect-error: a catalogue without the sign-in texts is not a Messages.
    const incomplete: Messages = withoutSignIn;
    const { wrong_credentials, ...errors } = signin.errors;
    // @ts-expect-error: nor one without a sign-in error.
    const missingError: Messages = { ...CATALOGUES.ru, signin: { ...signin, errors } };
    expect([incomplete, missingError, wrong_credentials]).toHaveLength(3);
  });
});

describe('the language switch links', () => {
  it('keep the page and its other parameters, and set lang once', () => {
    expect(withLocale('/signin', 'ru')).toBe('/signin?lang=ru');
    expect(withLocale('/signin?request=abc&return_to=%2Faccount', 'ru')).toBe(
      '/signin?request=abc&return_to=%2Faccount&lang=ru',
    );
    expect(withLocale('/account?lang=ru&notice=revoked&lang=de', 'en')).toBe(
      '/account?lang=en&notice=revoked',
    );
  });

  it.each(['//evil.example/x', '/.//evil.example', '/\\evil.example', 'https://evil.example/signin'])(
    'stay on this site for %j',
    (path) => {
      const href = withLocale(path, 'ru');
      expect(href).toMatch(/^\/(?!\/)/);
      expect(new URL(href, 'https://here.example').origin).toBe('https://here.example');
    },
  );
});
