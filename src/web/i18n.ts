import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../lib/password.js';
import type { SignUpProblem } from '../modules/accounts/accounts.service.js';
import { ALL_SCOPES, SCOPES, type Scope } from '../modules/oauth/scopes.js';

/**
 * The languages of the pages, and every text they show. A page's language is, in this order: a
 * `?lang=` query parameter (which the page also remembers in the `lang` cookie), that cookie, the
 * best language of `Accept-Language`, English.
 *
 * Adding a language: add its code to LOCALES, a `Messages` object for it to CATALOGUES (the
 * compiler names every missing text), and its formats in DATE_LOCALES.
 */
export const LOCALES = ['en', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** The query parameter of the language switch, and the cookie that remembers the choice. */
export const LOCALE_PARAM = 'lang';
export const LOCALE_COOKIE = 'lang';

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** One entry of `Accept-Language`: a language range and its weight. */
export interface LanguageRange {
  range: string;
  q: number;
}

/**
 * `Accept-Language` (RFC 9110 §12.5.4) as ranges by descending weight, in header order among
 * equal weights. Malformed entries and weights are skipped; `q=0` ("not acceptable") is dropped.
 */
export function parseAcceptLanguage(header: string | undefined): LanguageRange[] {
  if (!header) return [];
  const ranges: LanguageRange[] = [];
  for (const entry of header.slice(0, 1000).split(',')) {
    const [rawRange, ...parameters] = entry.split(';');
    const range = (rawRange ?? '').trim().toLowerCase();
    if (!/^(\*|[a-z]{1,8}(-[a-z0-9]{1,8})*)$/.test(range)) continue;
    let q = 1;
    let valid = true;
    for (const parameter of parameters) {
      const match = /^\s*q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/i.exec(parameter);
      if (match) q = Number(match[1]);
      else valid = false;
    }
    if (valid && q > 0) ranges.push({ range, q });
  }
  // Array.prototype.sort is stable: equal weights keep the header's order.
  return ranges.sort((a, b) => b.q - a.q);
}

/** The best supported language of an `Accept-Language` header; English when none fits. */
export function localeFromAcceptLanguage(header: string | undefined): Locale {
  for (const { range } of parseAcceptLanguage(header)) {
    if (range === '*') return DEFAULT_LOCALE;
    const primary = range.split('-', 1)[0];
    if (isLocale(primary)) return primary;
  }
  return DEFAULT_LOCALE;
}

/**
 * The language of a page: the switch's `?lang=` (when valid), then the `lang` cookie (when
 * valid), then `Accept-Language`. `remember` is set when the query chose a language the cookie
 * does not hold yet.
 */
export function negotiateLocale(input: {
  query?: unknown;
  cookie?: unknown;
  acceptLanguage?: string | undefined;
}): { locale: Locale; remember?: Locale } {
  if (isLocale(input.query)) {
    return input.cookie === input.query
      ? { locale: input.query }
      : { locale: input.query, remember: input.query };
  }
  if (isLocale(input.cookie)) return { locale: input.cookie };
  return { locale: localeFromAcceptLanguage(input.acceptLanguage) };
}

/** Texts with a count, by CLDR plural category; `{n}` is the count. `other` is required. */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** Locale of the dates the pages show (British English: "20 May 2026"). */
const DATE_LOCALES: Record<Locale, string> = { en: 'en-GB', ru: 'ru-RU' };

/** Each locale's plural rules, number and date formats, made once. */
const FORMATS = Object.fromEntries(
  LOCALES.map((locale) => [
    locale,
    {
      plural: new Intl.PluralRules(locale),
      number: new Intl.NumberFormat(locale),
      date: new Intl.DateTimeFormat(DATE_LOCALES[locale], {
        day: 'numeric',
        month: 'long',
        year: 'numeric',
        timeZone: 'UTC',
      }),
    },
  ]),
) as Record<Locale, { plural: Intl.PluralRules; number: Intl.NumberFormat; date: Intl.DateTimeFormat }>;

/** The text for `count` in the locale's plural form (Intl.PluralRules), with `{n}` filled in. */
export function plural(locale: Locale, forms: PluralForms, count: number): string {
  const { plural: rules, number } = FORMATS[locale];
  const text = forms[rules.select(count)] ?? forms.other;
  return text.replaceAll('{n}', number.format(count));
}

/** A date as the pages show it, in UTC: "20 May 2026", «20 мая 2026 г.». */
export function formatDate(locale: Locale, date: Date): string {
  return FORMATS[locale].date.format(date);
}

/** Why sign-in failed, as the sign-in page says it. */
export type SignInError = 'missing_credentials' | 'wrong_credentials' | 'account_disabled';

/** The notices of the account page (`/account?notice=…`). */
export const ACCOUNT_NOTICES = ['revoked', 'unknown_app', 'device_signed_out', 'unknown_device'] as const;
export type AccountNotice = (typeof ACCOUNT_NOTICES)[number];

export function isAccountNotice(value: unknown): value is AccountNotice {
  return typeof value === 'string' && (ACCOUNT_NOTICES as readonly string[]).includes(value);
}

/** What an error page says. */
export type ErrorPageKind =
  | 'form_expired'
  | 'form_incomplete'
  | 'request_expired'
  | 'invalid_link'
  | 'bad_request'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'server_error';

/** A sentence with a link inside it: `before` <a>`link`</a> `after`. */
export interface LinkedText {
  before: string;
  link: string;
  after: string;
}

/** Every text of the pages, in one language. */
export interface Messages {
  /** The language's own name, as the language switch shows it. */
  languageName: string;
  layout: {
    skipToContent: string;
    /** The accessible name of the language switch. */
    language: string;
  };
  titles: { signin: string; signup: string; account: string; consent: string; error: string };
  fields: { username: string; password: string; email: string; optional: string };
  signin: {
    heading: string;
    submit: string;
    noAccount: string;
    createAccount: string;
    errors: Record<SignInError, string>;
  };
  signup: {
    heading: string;
    correctFields: string;
    usernameHint: string;
    passwordHint: string;
    submit: string;
    haveAccount: string;
    signIn: string;
    problems: Record<SignUpProblem, string>;
  };
  consent: {
    heading: (client: string) => string;
    /** Followed by the site's URL. */
    siteAt: (client: string) => string;
    /** Followed by @username. */
    signedInAs: string;
    notYou: string;
    willGet: string;
    emailHint: string;
    walletWarning: (client: string) => string;
    walletAdvice: string;
    allow: string;
    deny: string;
    revokeLater: LinkedText;
  };
  /** What each scope shares, for the consent and account pages. */
  scopes: Record<Scope, string>;
  account: {
    heading: string;
    username: string;
    displayName: string;
    email: string;
    emailNotConfirmed: string;
    apps: string;
    appsCount: PluralForms;
    noApps: string;
    allowed: string;
    allowedOn: string;
    revoke: string;
    /** Completes "Revoke access" for screen readers, with the app's name. */
    revokeFor: (app: string) => string;
    devices: string;
    devicesCount: PluralForms;
    noDevices: string;
    /** "Signed in on <date>, last used on <date>". */
    deviceSignedInOn: string;
    deviceLastUsedOn: string;
    signOutDevice: string;
    signOut: string;
    notices: Record<AccountNotice, string>;
  };
  errors: Record<ErrorPageKind, { title: string; message: string }> & {
    retryIn: PluralForms;
    details: string;
    toAccount: string;
  };
}

const en: Messages = {
  languageName: 'English',
  layout: { skipToContent: 'Skip to content', language: 'Language' },
  titles: {
    signin: 'Sign in',
    signup: 'Create an account',
    account: 'Your account',
    consent: 'Allow access?',
    error: 'Something went wrong',
  },
  fields: { username: 'Username', password: 'Password', email: 'E-mail', optional: '(optional)' },
  signin: {
    heading: 'Sign in',
    submit: 'Sign in',
    noAccount: 'No account yet?',
    createAccount: 'Create an account',
    errors: {
      missing_credentials: 'Enter your username and password.',
      wrong_credentials: 'Wrong username or password.',
      account_disabled: 'This account has been disabled, so it cannot sign in.',
    },
  },
  signup: {
    heading: 'Create an account',
    correctFields: 'Please correct the fields marked below.',
    usernameHint: '3–32 letters a–z, digits and _, not only digits.',
    passwordHint: `At least ${PASSWORD_MIN_LENGTH} characters.`,
    submit: 'Create account',
    haveAccount: 'Already have an account?',
    signIn: 'Sign in',
    problems: {
      username_format: 'Username must be 3–32 characters of letters a–z, digits and _, and not only digits.',
      username_reserved: 'This username is reserved; choose another one.',
      username_taken: 'This username is already taken; choose another one.',
      password_too_short: `Password must be at least ${PASSWORD_MIN_LENGTH} characters.`,
      password_too_long: `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`,
      email_invalid: 'Enter a valid e-mail address, or leave the field empty.',
      email_too_long: 'The e-mail address must be at most 254 characters.',
    },
  },
  consent: {
    heading: (client) => `Allow ${client} to use your account?`,
    siteAt: (client) => `${client} is the site at`,
    signedInAs: 'Signed in as',
    notYou: 'Not you?',
    willGet: 'It will be able to:',
    emailHint: 'Untick the e-mail to allow the rest without sharing it.',
    walletWarning: (client) => `${client} will be able to charge coins from your wallet.`,
    walletAdvice: 'Allow this only if you trust this site with your money.',
    allow: 'Allow',
    deny: 'Deny',
    revokeLater: {
      before: 'You can revoke this access at any time on',
      link: 'your account page',
      after: '.',
    },
  },
  // The scopes' own descriptions (src/modules/oauth/scopes.ts) are the English texts.
  scopes: Object.fromEntries(ALL_SCOPES.map((scope) => [scope, SCOPES[scope].description])) as Record<
    Scope,
    string
  >,
  account: {
    heading: 'Your account',
    username: 'Username',
    displayName: 'Display name',
    email: 'E-mail',
    emailNotConfirmed: '(not confirmed)',
    apps: 'Apps you allowed',
    appsCount: { one: '{n} app can use your account.', other: '{n} apps can use your account.' },
    noApps: 'You have not allowed any app to use your account.',
    allowed: 'It can:',
    allowedOn: 'Allowed on',
    revoke: 'Revoke access',
    revokeFor: (app) => ` for ${app}`,
    devices: 'Signed-in devices',
    devicesCount: {
      one: 'The mobile app is signed in on {n} device.',
      other: 'The mobile app is signed in on {n} devices.',
    },
    noDevices: 'The mobile app is not signed in on any device.',
    deviceSignedInOn: 'Signed in on',
    deviceLastUsedOn: 'last used on',
    signOutDevice: 'Sign out this device',
    signOut: 'Sign out',
    notices: {
      revoked: 'Access revoked. The app can no longer use your account, unless you allow it again.',
      unknown_app: 'That app had no access to your account.',
      device_signed_out: 'The device is signed out. The app on it must sign in again.',
      unknown_device: 'That device was not signed in.',
    },
  },
  errors: {
    form_expired: {
      title: 'This form has expired',
      message: 'The form could not be checked. Go back, reload the page and try again.',
    },
    form_incomplete: {
      title: 'Something is missing',
      message: 'The form was not complete. Go back and try again.',
    },
    request_expired: {
      title: 'This request has expired',
      message: 'This sign-in request has expired or was already used. Go back to the site and start again.',
    },
    invalid_link: {
      title: 'This sign-in link is not valid',
      message:
        'The site that sent you here gave a link this service cannot accept. Go back to the site and try again; if it happens again, tell the site’s owners.',
    },
    bad_request: {
      title: 'This request is not valid',
      message: 'The page could not use what was sent. Go back and try again.',
    },
    forbidden: { title: 'Not allowed', message: 'You cannot do this here.' },
    not_found: { title: 'Not found', message: 'There is nothing at this address.' },
    method_not_allowed: { title: 'Not allowed', message: 'This page cannot be used this way.' },
    too_large: { title: 'Too much data', message: 'The form sent more data than the service accepts.' },
    rate_limited: { title: 'Too many attempts', message: 'Wait a little before you try again.' },
    unavailable: {
      title: 'Temporarily unavailable',
      message: 'The service cannot answer right now. Try again in a few minutes.',
    },
    server_error: {
      title: 'Something went wrong',
      message: 'An unexpected error happened on our side. Try again later.',
    },
    retryIn: { one: 'You can try again in {n} second.', other: 'You can try again in {n} seconds.' },
    details: 'Technical details:',
    toAccount: 'Go to your account',
  },
};

const ru: Messages = {
  languageName: 'Русский',
  layout: { skipToContent: 'Перейти к содержимому', language: 'Язык' },
  titles: {
    signin: 'Вход',
    signup: 'Создание аккаунта',
    account: 'Ваш аккаунт',
    consent: 'Разрешить доступ?',
    error: 'Что-то пошло не так',
  },
  fields: {
    username: 'Имя пользователя',
    password: 'Пароль',
    email: 'Электронная почта',
    optional: '(необязательно)',
  },
  signin: {
    heading: 'Вход',
    submit: 'Войти',
    noAccount: 'Ещё нет аккаунта?',
    createAccount: 'Создать аккаунт',
    errors: {
      missing_credentials: 'Введите имя пользователя и пароль.',
      wrong_credentials: 'Неверное имя пользователя или пароль.',
      account_disabled: 'Этот аккаунт отключён, войти в него нельзя.',
    },
  },
  signup: {
    heading: 'Создание аккаунта',
    correctFields: 'Исправьте отмеченные ниже поля.',
    usernameHint: 'От 3 до 32 символов: латинские буквы a–z, цифры и _, не только цифры.',
    passwordHint: `Не менее ${PASSWORD_MIN_LENGTH} символов.`,
    submit: 'Создать аккаунт',
    haveAccount: 'Уже есть аккаунт?',
    signIn: 'Войти',
    problems: {
      username_format:
        'Имя пользователя должно содержать от 3 до 32 символов: латинские буквы a–z, цифры и _, и не состоять только из цифр.',
      username_reserved: 'Это имя зарезервировано, выберите другое.',
      username_taken: 'Это имя уже занято, выберите другое.',
      password_too_short: `Пароль должен быть не короче ${PASSWORD_MIN_LENGTH} символов.`,
      password_too_long: `Пароль должен быть не длиннее ${PASSWORD_MAX_LENGTH} символов.`,
      email_invalid: 'Введите правильный адрес электронной почты или оставьте поле пустым.',
      email_too_long: 'Адрес электронной почты должен быть не длиннее 254 символов.',
    },
  },
  consent: {
    heading: (client) => `Разрешить «${client}» доступ к вашему аккаунту?`,
    siteAt: (client) => `«${client}» — это сайт`,
    signedInAs: 'Вы вошли как',
    notYou: 'Это не вы?',
    willGet: 'Сайт получит:',
    emailHint: 'Снимите отметку с электронной почты, чтобы разрешить остальное, не сообщая адрес.',
    walletWarning: (client) => `«${client}» сможет списывать монеты с вашего кошелька.`,
    walletAdvice: 'Разрешайте это, только если доверяете этому сайту свои деньги.',
    allow: 'Разрешить',
    deny: 'Отклонить',
    revokeLater: {
      before: 'Отозвать доступ можно в любой момент на',
      link: 'странице аккаунта',
      after: '.',
    },
  },
  scopes: {
    openid: 'Подтверждение вашей личности (вход на сайт)',
    profile: 'Имя пользователя, отображаемое имя, аватар, привязанный игровой аккаунт и метка',
    email: 'Адрес электронной почты и отметка о том, подтверждён ли он',
    verified: 'Уровень верификации и значок',
    wallet: 'Списание монет с вашего кошелька и просмотр сделанных списаний',
    offline_access: 'Доступ, даже когда вы не на сайте (пока вы его не отзовёте)',
  },
  account: {
    heading: 'Ваш аккаунт',
    username: 'Имя пользователя',
    displayName: 'Отображаемое имя',
    email: 'Электронная почта',
    emailNotConfirmed: '(не подтверждена)',
    apps: 'Приложения с доступом',
    appsCount: {
      one: 'Доступ к аккаунту есть у {n} приложения.',
      few: 'Доступ к аккаунту есть у {n} приложений.',
      many: 'Доступ к аккаунту есть у {n} приложений.',
      other: 'Доступ к аккаунту есть у {n} приложения.',
    },
    noApps: 'Вы ещё не разрешили ни одному приложению доступ к аккаунту.',
    allowed: 'Что разрешено:',
    allowedOn: 'Доступ разрешён',
    revoke: 'Отозвать доступ',
    revokeFor: (app) => ` у приложения «${app}»`,
    devices: 'Устройства, на которых выполнен вход',
    devicesCount: {
      one: 'Вход в мобильное приложение выполнен на {n} устройстве.',
      few: 'Вход в мобильное приложение выполнен на {n} устройствах.',
      many: 'Вход в мобильное приложение выполнен на {n} устройствах.',
      other: 'Вход в мобильное приложение выполнен на {n} устройства.',
    },
    noDevices: 'Вы не вошли в мобильное приложение ни на одном устройстве.',
    deviceSignedInOn: 'Вход выполнен',
    deviceLastUsedOn: 'последнее использование —',
    signOutDevice: 'Завершить сеанс на устройстве',
    signOut: 'Выйти',
    notices: {
      revoked:
        'Доступ отозван. Приложение больше не сможет пользоваться вашим аккаунтом, пока вы снова не разрешите.',
      unknown_app: 'У этого приложения не было доступа к вашему аккаунту.',
      device_signed_out: 'Сеанс на устройстве завершён. Приложению на нём нужно будет войти снова.',
      unknown_device: 'На этом устройстве не был выполнен вход.',
    },
  },
  errors: {
    form_expired: {
      title: 'Срок действия формы истёк',
      message: 'Не удалось проверить форму. Вернитесь назад, обновите страницу и попробуйте снова.',
    },
    form_incomplete: {
      title: 'Чего-то не хватает',
      message: 'Форма заполнена не полностью. Вернитесь назад и попробуйте снова.',
    },
    request_expired: {
      title: 'Срок действия запроса истёк',
      message: 'Этот запрос на вход устарел или уже использован. Вернитесь на сайт и начните заново.',
    },
    invalid_link: {
      title: 'Ссылка для входа недействительна',
      message:
        'Сайт, который направил вас сюда, передал ссылку, которую сервис не может принять. Вернитесь на сайт и попробуйте снова; если ошибка повторится, сообщите о ней владельцам сайта.',
    },
    bad_request: {
      title: 'Неверный запрос',
      message: 'Страница не смогла обработать отправленные данные. Вернитесь назад и попробуйте снова.',
    },
    forbidden: { title: 'Действие запрещено', message: 'Здесь это сделать нельзя.' },
    not_found: { title: 'Страница не найдена', message: 'По этому адресу ничего нет.' },
    method_not_allowed: {
      title: 'Действие запрещено',
      message: 'Эту страницу нельзя использовать таким образом.',
    },
    too_large: {
      title: 'Слишком много данных',
      message: 'Форма отправила больше данных, чем принимает сервис.',
    },
    rate_limited: {
      title: 'Слишком много попыток',
      message: 'Подождите немного, прежде чем пробовать снова.',
    },
    unavailable: {
      title: 'Сервис временно недоступен',
      message: 'Сервис сейчас не может ответить. Попробуйте снова через несколько минут.',
    },
    server_error: {
      title: 'Что-то пошло не так',
      message: 'На нашей стороне произошла непредвиденная ошибка. Попробуйте позже.',
    },
    retryIn: {
      one: 'Попробовать снова можно через {n} секунду.',
      few: 'Попробовать снова можно через {n} секунды.',
      many: 'Попробовать снова можно через {n} секунд.',
      other: 'Попробовать снова можно через {n} секунды.',
    },
    details: 'Технические подробности:',
    toAccount: 'Перейти в аккаунт',
  },
};

export const CATALOGUES: Record<Locale, Messages> = { en, ru };

export function messages(locale: Locale): Messages {
  return CATALOGUES[locale];
}
