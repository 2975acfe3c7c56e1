import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/** The texts of the verification message, by language (CONTRACT.md §7: the recipient's language). */
const TEXTS: Record<
  MailLocale,
  { subject: string; greeting: (username: string) => string; body: string; button: string; ignore: string }
> = {
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

/** Text as HTML character data or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The message carrying a verification link: a plain-text and an HTML part with the same link. */
export function verificationMail(input: {
  to: string;
  username: string;
  locale: MailLocale;
  link: string;
}): MailMessage {
  const t = TEXTS[input.locale];
  const link = escapeHtml(input.link);
  return {
    kind: 'email_verification',
    to: input.to,
    locale: input.locale,
    subject: t.subject,
    text: `${t.greeting(input.username)}\n\n${t.body}\n\n${input.link}\n\n${t.ignore}\n`,
    html:
      `<p>${escapeHtml(t.greeting(input.username))}</p>\n<p>${escapeHtml(t.body)}</p>\n` +
      `<p><a href="${link}">${escapeHtml(t.button)}</a></p>\n<p>${link}</p>\n<p>${escapeHtml(t.ignore)}</p>\n`,
  };
}
