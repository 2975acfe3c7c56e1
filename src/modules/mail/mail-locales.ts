/** The languages a message is written in. */
export const MAIL_LOCALES = ['en', 'ru'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];
