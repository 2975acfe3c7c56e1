import { escapeHtml } from '../../lib/html.js';
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

/** The texts of one message listing several accounts of one address, each with its own link. */
const SEVERAL: Record<
  MailLocale,
  {
    greeting: string;
    body: string;
    account: (username: string) => string;
    button: (username: string) => string;
  }
> = {
  en: {
    greeting: 'Hello!',
    body: 'Someone asked to reset the password of the accounts that use this address. To choose a new password for one of them, open its link below. Each link works once, for 30 minutes, and only the newest link sent for an account works.',
    account: (username) => `Account ${username}:`,
    button: (username) => `Choose a new password for ${username}`,
  },
  ru: {
    greeting: 'Здравствуйте!',
    body: 'Кто-то попросил сбросить пароль аккаунтов с этим адресом. Чтобы выбрать новый пароль для одного из них, откройте его ссылку ниже. Каждая ссылка действует один раз, 30 минут, и для каждого аккаунта работает только самая новая ссылка.',
    account: (username) => `Аккаунт ${username}:`,
    button: (username) => `Выбрать новый пароль для ${username}`,
  },
};

/**
 * The message carrying reset links to one address: a plain-text and an HTML part with the same
 * links. One account: its greeting and link. Several accounts sharing the address: ONE message
 * naming each account (its username) next to its own link, so an address is never sent a message
 * per account it holds.
 */
export function resetMail(input: {
  to: string;
  locale: MailLocale;
  accounts: ReadonlyArray<{ username: string; link: string }>;
}): MailMessage {
  const [only, ...others] = input.accounts;
  if (only && others.length === 0)
    return linkMail('password_reset', TEXTS, { to: input.to, locale: input.locale, ...only });
  const t = TEXTS[input.locale];
  const s = SEVERAL[input.locale];
  const textList = input.accounts.map(({ username, link }) => `${s.account(username)}\n${link}`).join('\n\n');
  const htmlList = input.accounts
    .map(({ username, link }) => {
      const href = escapeHtml(link);
      return `<p>${escapeHtml(s.account(username))}<br>\n<a href="${href}">${escapeHtml(s.button(username))}</a><br>\n${href}</p>`;
    })
    .join('\n');
  return {
    kind: 'password_reset',
    to: input.to,
    locale: input.locale,
    subject: t.subject,
    text: `${s.greeting}\n\n${s.body}\n\n${textList}\n\n${t.ignore}\n`,
    html: `<p>${escapeHtml(s.greeting)}</p>\n<p>${escapeHtml(s.body)}</p>\n${htmlList}\n<p>${escapeHtml(t.ignore)}</p>\n`,
  };
}
