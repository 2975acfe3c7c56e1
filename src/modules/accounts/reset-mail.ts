import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/** The texts of the reset message, by language (the recipient's language). */
const TEXTS: Record<MailLocale, LinkMailTexts> = {
  en: {
    subject: 'Reset your password',
    greeting: (username) => `Hello, ${username}!`,
    body: 'Someone asked to reset the password of your account. To choose a new password, open the link below. The link works once, for 30 minutes, and only the newest link sent to you works.',
    button: 'Choose a new password',
    ignore: 'If you did not ask for this, ignore this message: your password stays as it is.',
  },
  ru: {
    subject: 'Сброс пароля',
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: 'Кто-то попросил сбросить пароль вашего аккаунта. Чтобы выбрать новый пароль, откройте ссылку ниже. Ссылка действует один раз, 30 минут, и работает только самая новая из присланных вам ссылок.',
    button: 'Выбрать новый пароль',
    ignore: 'Если вы этого не просили, не обращайте внимания на это письмо: пароль останется прежним.',
  },
};

/** The message carrying a reset link: a plain-text and an HTML part with the same link. */
export function resetMail(input: {
  to: string;
  username: string;
  locale: MailLocale;
  link: string;
}): MailMessage {
  return linkMail('password_reset', TEXTS, input);
}
