import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/** The texts of the verification message, by language (the recipient's language). */
const TEXTS: Record<MailLocale, LinkMailTexts> = {
  en: {
    subject: 'Confirm your e-mail address',
    greeting: (username) => `Hello, ${username}!`,
    body: 'To confirm that this address is yours, open the link below and press the button on the page. The link works once, for 24 hours.',
    button: 'Confirm the address',
    ignore: 'If you did not create an account, ignore this message: nothing will change.',
  },
  ru: {
    subject: 'Подтвердите адрес электронной почты',
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: 'Чтобы подтвердить, что это ваш адрес, откройте ссылку ниже и нажмите кнопку на странице. Ссылка действует один раз, 24 часа.',
    button: 'Подтвердить адрес',
    ignore: 'Если вы не создавали аккаунт, не обращайте внимания на это письмо: ничего не изменится.',
  },
};

/** The message carrying a verification link: a plain-text and an HTML part with the same link. */
export function verificationMail(input: {
  to: string;
  username: string;
  locale: MailLocale;
  link: string;
}): MailMessage {
  return linkMail('email_verification', TEXTS, input);
}
