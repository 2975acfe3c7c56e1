import { escapeHtml } from '../../lib/html.js';
import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import type { MailLocale, MailMessage } from '../mail/mail.service.js';

/** The message to the new address, carrying its link (the recipient's language). */
const LINK_TEXTS: Record<MailLocale, LinkMailTexts> = {
  en: {
    subject: 'Confirm your new e-mail address',
    greeting: (username) => `Hello, ${username}!`,
    body: 'You asked to use this address for your account. To confirm it, open the link below and press the button on the page. The link works once, for 24 hours; until then your account keeps its old address.',
    button: 'Use this address',
    ignore: 'If you did not ask for this, ignore this message: nothing will change.',
  },
  ru: {
    subject: 'Подтвердите новый адрес электронной почты',
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: 'Вы попросили привязать этот адрес к своему аккаунту. Чтобы подтвердить его, откройте ссылку ниже и нажмите кнопку на странице. Ссылка действует один раз, 24 часа; до тех пор у аккаунта остаётся старый адрес.',
    button: 'Использовать этот адрес',
    ignore: 'Если вы об этом не просили, не обращайте внимания на это письмо: ничего не изменится.',
  },
};

/** The notice to the old address once the change took effect. */
const NOTICE_TEXTS: Record<
  MailLocale,
  {
    subject: string;
    greeting: (username: string) => string;
    changed: (masked: string) => string;
    notYou: string;
    reset: string;
  }
> = {
  en: {
    subject: 'Your e-mail address was changed',
    greeting: (username) => `Hello, ${username}!`,
    changed: (masked) =>
      `The e-mail address of your account was changed to ${masked}. Messages about your account now go there, not to this address.`,
    notYou: 'If this was not you, reset your password at once:',
    reset: 'Reset your password',
  },
  ru: {
    subject: 'Адрес электронной почты изменён',
    greeting: (username) => `Здравствуйте, ${username}!`,
    changed: (masked) =>
      `Адрес электронной почты вашего аккаунта изменён на ${masked}. Письма об аккаунте теперь приходят туда, а не на этот адрес.`,
    notYou: 'Если это были не вы, сразу смените пароль:',
    reset: 'Сменить пароль',
  },
};

/** The message carrying a change link to the new address: a plain-text and an HTML part with the same link. */
export function emailChangeMail(input: {
  to: string;
  username: string;
  locale: MailLocale;
  link: string;
}): MailMessage {
  return linkMail('email_change', LINK_TEXTS, input);
}

/**
 * The notice to the old address: the new address only
 * masked (`n…@example.com`), as the old mailbox may no longer be the user's, and where to reset the
 * password if the change was not theirs.
 */
export function emailChangedNotice(input: {
  to: string;
  username: string;
  locale: MailLocale;
  maskedNewAddress: string;
  resetLink: string;
}): MailMessage {
  const t = NOTICE_TEXTS[input.locale];
  const link = escapeHtml(input.resetLink);
  const changed = t.changed(input.maskedNewAddress);
  return {
    kind: 'email_changed',
    to: input.to,
    locale: input.locale,
    subject: t.subject,
    text: `${t.greeting(input.username)}\n\n${changed}\n\n${t.notYou}\n${input.resetLink}\n`,
    html:
      `<p>${escapeHtml(t.greeting(input.username))}</p>\n<p>${escapeHtml(changed)}</p>\n` +
      `<p>${escapeHtml(t.notYou)} <a href="${link}">${escapeHtml(t.reset)}</a></p>\n<p>${link}</p>\n`,
  };
}
