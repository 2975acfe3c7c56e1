import type { Locale } from '../../i18n/index.js';
import { type DevelopersTexts, developersEn } from './en.js';
import { developersRu } from './ru.js';

export type { DevelopersTexts } from './en.js';

const TEXTS: Record<Locale, DevelopersTexts> = { en: developersEn, ru: developersRu };

/** The developer portal's texts of one language: the `d` of its templates. */
export function developersTexts(locale: Locale): DevelopersTexts {
  return TEXTS[locale];
}
