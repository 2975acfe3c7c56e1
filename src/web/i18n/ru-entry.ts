import type { EntryTexts } from './entry-texts.js';

/** The landing page and the naming of the app on the sign-in page, in Russian. */
export const ruEntry: EntryTexts = {
  intro: (service) => `${service} — аккаунт для входа на сайты и в приложения, которые с ним работают.`,
  signIn: 'Войти',
  account: 'Ваш аккаунт',
  createAccount: 'Создать аккаунт',
  statusHeading: 'Состояние платформы',
  statuses: {
    operational: 'Все системы работают',
    degraded: 'Часть сервисов работает с перебоями',
    maintenance: 'Идут технические работы',
  },
  incidentsHeading: 'Текущие инциденты',
  severities: { minor: 'Незначительный', major: 'Серьёзный', critical: 'Критический' },
  since: 'с',
  statusAsJson: 'Состояние в формате JSON',
  developersHeading: 'Разработчикам',
  developersText: 'Сайты выполняют вход пользователей по OAuth 2.0 и OpenID Connect.',
  apiReference: 'Справочник API',
  discovery: 'Обнаружение OpenID Connect',
  continueTo: (client) => `чтобы продолжить в «${client}»`,
  clientLogo: (client) => `Логотип «${client}»`,
  serviceLogo: (service) => `Логотип ${service}`,
};
