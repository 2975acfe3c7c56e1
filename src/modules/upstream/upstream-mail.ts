import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { escapeHtml } from '../../lib/html.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';

/** What happened to the account's links: the notice says it in the recipient's language. */
export type LinkChange = 'linked' | 'unlinked';

const TEXTS: Record<
  MailLocale,
  {
    subject: Record<LinkChange, string>;
    greeting: (username: string) => string;
    body: Record<LinkChange, (provider: string, who: string) => string>;
    notYou: string;
    link: string;
  }
> = {
  en: {
    subject: {
      linked: 'A sign-in through another account was added to your account',
      unlinked: 'A sign-in through another account was removed from your account',
    },
    greeting: (username) => `Hello, ${username}!`,
    body: {
      linked: (provider, who) =>
        `The ${provider} account ${who} was linked to your account. It can now sign in to your account.`,
      unlinked: (provider, who) =>
        `The ${provider} account ${who} was unlinked from your account. It can no longer sign in to it.`,
    },
    notYou: 'If this was not you, check the accounts you sign in with and change your password at once:',
    link: 'Your account',
  },
  ru: {
    subject: {
      linked: 'К аккаунту привязан вход через другой аккаунт',
      unlinked: 'От аккаунта отвязан вход через другой аккаунт',
    },
    greeting: (username) => `Здравствуйте, ${username}!`,
    body: {
      linked: (provider, who) =>
        `К вашему аккаунту привязан аккаунт ${provider} ${who}. Теперь через него можно войти в ваш аккаунт.`,
      unlinked: (provider, who) =>
        `От вашего аккаунта отвязан аккаунт ${provider} ${who}. Войти через него больше нельзя.`,
    },
    notYou: 'Если это были не вы, проверьте аккаунты для входа и сразу смените пароль:',
    link: 'Ваш аккаунт',
  },
};

/**
 * Tells the account's confirmed address that a way in through another provider was added or
 * removed, as a passkey's addition or removal is (an unconfirmed address may be someone else's);
 * past the hourly limit the notice is dropped rather than the change refused.
 */
export async function notifyLinkChange(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; change: LinkChange; provider: string; who: string; locale: MailLocale },
): Promise<void> {
  const user = await findUserById(db, input.userId);
  if (!user?.email || !user.emailVerified) return;
  const t = TEXTS[input.locale];
  const body = t.body[input.change](input.provider, input.who);
  const accountLink = new URL('/account/security#providers', ctx.config.PUBLIC_URL).href;
  const link = escapeHtml(accountLink);
  await enqueueMail(db, ctx, {
    kind: `provider_${input.change}`,
    to: user.email,
    locale: input.locale,
    subject: t.subject[input.change],
    text: `${t.greeting(user.username)}\n\n${body}\n\n${t.notYou}\n${accountLink}\n`,
    html:
      `<p>${escapeHtml(t.greeting(user.username))}</p>\n<p>${escapeHtml(body)}</p>\n` +
      `<p>${escapeHtml(t.notYou)} <a href="${link}">${escapeHtml(t.link)}</a></p>\n<p>${link}</p>\n`,
    userId: user.id,
  });
}
