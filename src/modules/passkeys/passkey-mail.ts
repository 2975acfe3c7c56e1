import { escapeHtml } from '../../lib/html.js';
import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/** What happened to the account's passkeys: the notice says it in the recipient's language. */
export type PasskeyChange = 'added' | 'removed';

const TEXTS: Record<
  MailLocale,
  {
    subject: Record<PasskeyChange, string>;
    greeting: (username: string) => string;
    body: Record<PasskeyChange, (name: string) => string>;
    notYou: string;
    link: string;
  }
> = {
  en: {
    subject: {
      added: 'A passkey was added to your account',
      removed: 'A passkey was removed from your account',
    },
    greeting: (username) => `Hello, ${username}!`,
    body: {
      added: (name) =>
        `The passkey "${name}" was added to your account. It can now sign in to your account on its own.`,
      removed: (name) => `The passkey "${name}" was removed from your account. It can no longer sign in.`,
    },
    notYou: 'If this was not you, check your passkeys and change your password at once:',
    link: 'Your account',
  },
  ru: {
    subject: { added: 'К аккаунту добавлен ключ доступа', removed: 'Из аккаунта удалён ключ доступа' },
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: {
      added: (name) =>
        `К вашему аккаунту добавлен ключ доступа «${name}». Теперь с ним можно войти в аккаунт без пароля.`,
      removed: (name) => `Из вашего аккаунта удалён ключ доступа «${name}». Войти с ним больше нельзя.`,
    },
    notYou: 'Если это были не вы, проверьте ключи доступа и сразу смените пароль:',
    link: 'Ваш аккаунт',
  },
};

/**
 * The notice that a passkey was added to or removed from the account (a new way in, or one gone,
 * is told to the account's address, as a change of address is), with a link to where its
 * passkeys are managed.
 */
export function passkeyChangedNotice(input: {
  to: string;
  username: string;
  locale: MailLocale;
  change: PasskeyChange;
  passkeyName: string;
  accountLink: string;
}): MailMessage {
  const t = TEXTS[input.locale];
  const body = t.body[input.change](input.passkeyName);
  const link = escapeHtml(input.accountLink);
  return {
    kind: `passkey_${input.change}`,
    to: input.to,
    locale: input.locale,
    subject: t.subject[input.change],
    text: `${t.greeting(input.username)}\n\n${body}\n\n${t.notYou}\n${input.accountLink}\n`,
    html:
      `<p>${escapeHtml(t.greeting(input.username))}</p>\n<p>${escapeHtml(body)}</p>\n` +
      `<p>${escapeHtml(t.notYou)} <a href="${link}">${escapeHtml(t.link)}</a></p>\n<p>${link}</p>\n`,
  };
}
