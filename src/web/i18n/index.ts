import { bestLanguage } from '../../lib/accept-language.js';
import { en } from './en.js';
import type { LocaleDefinition, Messages, PluralForms } from './messages.js';
import { ru } from './ru.js';

export { type LanguageRange, parseAcceptLanguage } from '../../lib/accept-language.js';
export {
  ACCOUNT_NOTICES,
  type AccountNotice,
  type ErrorPageKind,
  isAccountNotice,
  type LinkedText,
  type LocaleDefinition,
  type Messages,
  type PluralForms,
  type SignInError,
} from './messages.js';

/**
 * The languages of the pages. A page's language is, in this order: a `?lang=` query parameter
 * (which the page also remembers in the `lang` cookie), that cookie, the best language of
 * `Accept-Language`, English.
 *
 * Adding a language: a file like ru.ts (the compiler names every missing text) and its line here.
 */
const REGISTRY = { en, ru } satisfies Record<string, LocaleDefinition>;

export type Locale = keyof typeof REGISTRY;
export const LOCALES = Object.keys(REGISTRY) as readonly Locale[];
export const DEFAULT_LOCALE: Locale = 'en';

/** Every locale's texts. */
export const CATALOGUES = Object.fromEntries(
  LOCALES.map((locale) => [locale, REGISTRY[locale].messages]),
) as Record<Locale, Messages>;

/** The query parameter of the language switch, and the cookie that remembers the choice. */
export const LOCALE_PARAM = 'lang';
export const LOCALE_COOKIE = 'lang';

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The best supported language of an `Accept-Language` header; English when none fits. */
export function localeFromAcceptLanguage(header: string | undefined): Locale {
  return bestLanguage(header, LOCALES, DEFAULT_LOCALE);
}

/**
 * The first supported language of an OpenID Connect `ui_locales` value (OIDC Core §3.1.2.1:
 * space-separated BCP 47 tags, most preferred first), by its primary subtag; undefined when none is.
 */
export function localeFromUiLocales(value: string | null | undefined): Locale | undefined {
  for (const tag of (value ?? '').split(' ')) {
    const primary = tag.split('-', 1)[0]?.toLowerCase();
    if (isLocale(primary)) return primary;
  }
  return undefined;
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

/** Each locale's plural rules, number and date formats, made once. */
const FORMATS = Object.fromEntries(
  LOCALES.map((locale) => [
    locale,
    {
      plural: new Intl.PluralRules(locale),
      number: new Intl.NumberFormat(locale),
      date: new Intl.DateTimeFormat(REGISTRY[locale].dateLocale, {
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

export function messages(locale: Locale): Messages {
  return CATALOGUES[locale];
}
