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

/** The notice to the current, confirmed address that a change away from it was asked for. */
const REQUESTED_TEXTS: Record<MailLocale, (masked: string) => LinkMailTexts> = {
  en: (masked) => ({
    subject: 'A new e-mail address was asked for your account',
    greeting: (username) => `Hello, ${username}!`,
    body: `Someone signed in to your account asked to use ${masked} instead of this address. It takes effect only if the link sent there is opened; until then messages about your account still come here.`,
    button: 'Review your e-mail address',
    ignore:
      'If this was not you, someone can use your account: change your password at once, then check your e-mail address and security settings.',
  }),
  ru: (masked) => ({
    subject: 'Для вашего аккаунта запрошен новый адрес почты',
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: `Кто-то, вошедший в ваш аккаунт, попросил использовать ${masked} вместо этого адреса. Изменение вступит в силу, только если открыть ссылку, отправленную туда; до тех пор письма об аккаунте приходят сюда.`,
    button: 'Проверить адрес почты',
    ignore:
      'Если это были не вы, кто-то может пользоваться вашим аккаунтом: сразу смените пароль, затем проверьте адрес почты и настройки безопасности.',
  }),
};

/**
 * The notice to the account's confirmed address when a change to another one is asked for (the
 * change itself waits for the link sent to the new address): the new address only masked, and
 * the way to the account's e-mail page. A change of where password resets go is never silent.
 */
export function emailChangeRequestedNotice(input: {
  to: string;
  username: string;
  locale: MailLocale;
  maskedNewAddress: string;
  accountLink: string;
}): MailMessage {
  const texts = {
    en: REQUESTED_TEXTS.en(input.maskedNewAddress),
    ru: REQUESTED_TEXTS.ru(input.maskedNewAddress),
  };
  return linkMail('email_change_requested', texts, {
    to: input.to,
    username: input.username,
    locale: input.locale,
    link: input.accountLink,
  });
}
