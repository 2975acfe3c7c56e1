import type { Locale } from '../../i18n/index.js';
import { auditEn } from './en-audit.js';
import { clientsEn } from './en-clients.js';
import { commonEn } from './en-common.js';
import { dashboardEn } from './en-dashboard.js';
import { platformEn } from './en-platform.js';
import { providersEn } from './en-providers.js';
import { reviewEn } from './en-review.js';
import { usersEn } from './en-users.js';
import { auditRu } from './ru-audit.js';
import { clientsRu } from './ru-clients.js';
import { commonRu } from './ru-common.js';
import { dashboardRu } from './ru-dashboard.js';
import { platformRu } from './ru-platform.js';
import { providersRu } from './ru-providers.js';
import { reviewRu } from './ru-review.js';
import { usersRu } from './ru-users.js';

/** The console's texts of one language, by area: the `c` of its templates. */
export interface ConsoleTexts {
  common: typeof commonEn;
  dashboard: typeof dashboardEn;
  users: typeof usersEn;
  clients: typeof clientsEn;
  /** Applications that site owners registered: owners, approval, the wallet request. */
  review: typeof reviewEn;
  /** The providers people sign in through ("Continue with …"). */
  providers: typeof providersEn;
  audit: typeof auditEn;
  platform: typeof platformEn;
}

const TEXTS: Record<Locale, ConsoleTexts> = {
  en: {
    common: commonEn,
    dashboard: dashboardEn,
    users: usersEn,
    clients: clientsEn,
    review: reviewEn,
    providers: providersEn,
    audit: auditEn,
    platform: platformEn,
  },
  ru: {
    common: commonRu,
    dashboard: dashboardRu,
    users: usersRu,
    clients: clientsRu,
    review: reviewRu,
    providers: providersRu,
    audit: auditRu,
    platform: platformRu,
  },
};

export function consoleTexts(locale: Locale): ConsoleTexts {
  return TEXTS[locale];
}
