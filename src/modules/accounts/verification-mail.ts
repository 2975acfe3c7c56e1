import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/**
 * The texts of the verification message, by language (the recipient's language). The body names
 * the address and the account it would be confirmed for: a click must never vouch for an account
 * its reader did not make (an account someone else opened with this address, so that sites that
 * link accounts by verified e-mail would hand it the reader's).
 */
const TEXTS: Record<MailLocale, (email: string, username: string) => LinkMailTexts> = {
  en: (email, username) => ({
    subject: 'Confirm your e-mail address',
    greeting: (name) => `Hello, ${name}!`,
    body: `Confirm that ${email} belongs to the account ${username}: open the link below and press the button on the page. The link works once, for 24 hours.`,
    button: `Confirm the address for ${username}`,
    ignore: `If you did not create the account ${username}, ignore this message and do not press the button: nothing will change.`,
  }),
  ru: (email, username) => ({
    subject: 'Подтвердите адрес электронной почты',
    greeting: (name) => `Здравствуйте, ${name}!`,
    body: `Подтвердите, что ${email} — адрес аккаунта ${username}: откройте ссылку ниже и нажмите кнопку на странице. Ссылка действует один раз, 24 часа.`,
    button: `Подтвердить адрес для ${username}`,
    ignore: `Если вы не создавали аккаунт ${username}, не обращайте внимания на это письмо и не нажимайте кнопку: ничего не изменится.`,
  }),
};

/** The message carrying a verification link: a plain-text and an HTML part with the same link. */
export function verificationMail(input: {
  to: string;
  username: string;
  locale: MailLocale;
  link: string;
}): MailMessage {
  const texts = {
    en: TEXTS.en(input.to, input.username),
    ru: TEXTS.ru(input.to, input.username),
  };
  return linkMail('email_verification', texts, input);
}
