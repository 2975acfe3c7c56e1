import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';
import type { User } from './user.js';

/**
 * What was done with the whole account, behind the re-authentication of docs/pages.md: a copy of
 * its data taken, or the account deleted. Either may be someone holding a copied session.
 */
export type AccountNotice = 'account_exported' | 'account_deleted';

const TEXTS: Record<AccountNotice, Record<MailLocale, LinkMailTexts>> = {
  account_exported: {
    en: {
      subject: "A copy of your account's data was downloaded",
      greeting: (username) => `Hello, ${username}!`,
      body: 'Everything stored about your account (profile, sign-ins, apps, wallet) was downloaded from its account page.',
      button: 'Review your security settings',
      ignore:
        'If this was not you, someone is signed in as you: change your password at once, with the boxes that sign out devices and apps ticked.',
    },
    ru: {
      subject: 'Скачана копия данных вашего аккаунта',
      greeting: (username) => `Здравствуйте, ${username}!`,
      body: 'Со страницы аккаунта скачано всё, что хранится о вашем аккаунте (профиль, входы, приложения, кошелёк).',
      button: 'Проверить настройки безопасности',
      ignore:
        'Если это были не вы, кто-то вошёл под вашим именем: сразу смените пароль, оставив отмеченными пункты о выходе на устройствах и в приложениях.',
    },
  },
  account_deleted: {
    en: {
      subject: 'Your account was deleted',
      greeting: (username) => `Hello, ${username}!`,
      body: 'Your account was deleted from its account page, with its password. Its profile, sign-ins and second factors are gone; its name stays reserved.',
      button: 'Open the service',
      ignore:
        'If this was not you, answer the operator of the service at once: the account cannot be restored here.',
    },
    ru: {
      subject: 'Ваш аккаунт удалён',
      greeting: (username) => `Здравствуйте, ${username}!`,
      body: 'Ваш аккаунт удалён со страницы аккаунта, с подтверждением пароля. Его профиль, входы и вторые факторы удалены; имя остаётся занятым.',
      button: 'Открыть сервис',
      ignore: 'Если это были не вы, сразу напишите оператору сервиса: здесь аккаунт восстановить нельзя.',
    },
  },
};

/**
 * Queues the notice on the transaction of what it announces (the outbox), to the account's
 * confirmed address only: an unconfirmed one may be anyone's.
 */
export async function enqueueAccountNotice(
  trx: Kysely<Database>,
  ctx: Context,
  input: {
    user: Pick<User, 'id' | 'username' | 'email' | 'emailVerified'>;
    notice: AccountNotice;
    locale: MailLocale;
  },
): Promise<void> {
  const { user } = input;
  if (!user.email || !user.emailVerified) return;
  const path =
    input.notice === 'account_exported' ? `/account/security?lang=${input.locale}` : `/?lang=${input.locale}`;
  const message = linkMail(input.notice, TEXTS[input.notice], {
    to: user.email,
    username: user.username,
    locale: input.locale,
    link: `${ctx.config.PUBLIC_URL}${path}`,
  });
  await enqueueMail(trx, ctx, { ...message, userId: user.id });
}
