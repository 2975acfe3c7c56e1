import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { type LinkMailTexts, linkMail } from '../mail/link-mail.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';

/** The changes to a user's second factors that they are told of by e-mail. */
export type MfaNotice =
  | 'totp_enabled'
  | 'totp_disabled'
  | 'recovery_codes_renewed'
  | 'recovery_code_used'
  | 'second_factor_failures';

const en = (subject: string, body: string): LinkMailTexts => ({
  subject,
  greeting: (username) => `Hello, ${username}!`,
  body,
  button: 'Review your security settings',
  ignore:
    'If this was not you, someone knows your password: reset it at once from the sign-in page, then check these settings.',
});

const ru = (subject: string, body: string): LinkMailTexts => ({
  subject,
  greeting: (username) => `Здравствуйте, ${username}!`,
  body,
  button: 'Проверить настройки безопасности',
  ignore:
    'Если это были не вы, кто-то знает ваш пароль: сразу смените его со страницы входа, затем проверьте эти настройки.',
});

const TEXTS: Record<MfaNotice, Record<MailLocale, LinkMailTexts>> = {
  totp_enabled: {
    en: en(
      'Two-step sign-in is on',
      'Your account now asks for a code from your authenticator app after your password.',
    ),
    ru: ru(
      'Двухэтапный вход включён',
      'Теперь после пароля ваш аккаунт спрашивает код из приложения-аутентификатора.',
    ),
  },
  totp_disabled: {
    en: en(
      'Two-step sign-in is off',
      'Your account no longer asks for a code from an authenticator app; its recovery codes no longer work.',
    ),
    ru: ru(
      'Двухэтапный вход выключен',
      'Ваш аккаунт больше не спрашивает код из приложения-аутентификатора; его резервные коды больше не действуют.',
    ),
  },
  recovery_codes_renewed: {
    en: en(
      'New recovery codes',
      'New recovery codes were made for your account; the old ones no longer work.',
    ),
    ru: ru(
      'Новые резервные коды',
      'Для вашего аккаунта созданы новые резервные коды; старые больше не действуют.',
    ),
  },
  recovery_code_used: {
    en: en(
      'A recovery code was used',
      'Someone signed in to your account with one of its recovery codes. That code no longer works.',
    ),
    ru: ru(
      'Использован резервный код',
      'Кто-то вошёл в ваш аккаунт с одним из его резервных кодов. Этот код больше не действует.',
    ),
  },
  second_factor_failures: {
    en: en(
      'Wrong sign-in codes after your password',
      'Your password was entered, and then several wrong codes from your authenticator app or recovery codes in a row. If that was you, there is nothing to do. After too many in a row, only a browser or app you signed in with before can enter a code, until a code passes there or the password is reset.',
    ),
    ru: ru(
      'Неверные коды входа после вашего пароля',
      'Был введён ваш пароль, а затем несколько неверных кодов из приложения-аутентификатора или резервных кодов подряд. Если это были вы, ничего делать не нужно. После слишком многих неверных кодов подряд код можно ввести только в браузере или приложении, где вы уже входили, пока там не пройдёт верный код или пароль не будет сброшен.',
    ),
  },
};

/**
 * Queues the notice of a change to the user's second factors, on the transaction of the change
 * (the outbox), when the account has a confirmed e-mail address. A notice over the hourly
 * limit of its kind is not queued; the change stands all the same.
 */
export async function enqueueMfaNotice(
  trx: Kysely<Database>,
  ctx: Context,
  input: { userId: number; notice: MfaNotice; locale: MailLocale },
): Promise<void> {
  const user = await findUserById(trx, input.userId);
  // Only to an address the owner confirmed: an unconfirmed one may be anyone's (anyone can type it
  // at sign-up), and these notices say how the account is protected.
  if (!user?.email || !user.emailVerified) return;
  const message = linkMail(input.notice, TEXTS[input.notice], {
    to: user.email,
    username: user.username,
    locale: input.locale,
    link: `${ctx.config.PUBLIC_URL}/account/security?lang=${input.locale}`,
  });
  await enqueueMail(trx, ctx, { ...message, userId: user.id });
}
