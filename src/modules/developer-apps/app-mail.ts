import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { escapeHtml } from '../../lib/html.js';
import type { Client } from '../clients/client.js';
import { enqueueMail, MAIL_LOCALES, type MailLocale } from '../mail/mail.service.js';
import { listOwnerRecipients, MAX_APP_OWNERS } from './owners.repository.js';

/** What happened to an application, as its owners are told. */
export type AppChange =
  | { kind: 'created' }
  | { kind: 'updated'; fields: readonly string[] }
  | { kind: 'disabled' }
  | { kind: 'enabled' }
  | { kind: 'deleted' }
  | { kind: 'owner_added'; username: string }
  | { kind: 'owner_removed'; username: string }
  | { kind: 'wallet_requested' }
  | { kind: 'wallet_granted' }
  | { kind: 'approved' }
  | { kind: 'secret_added' }
  | { kind: 'secret_revoked' };

interface AppMailTexts {
  subject: (name: string) => string;
  greeting: (username: string) => string;
  /** Who did it: an owner's username, or the operators. */
  by: (who: string | null) => string;
  change: (change: AppChange) => string;
  button: string;
  unexpected: string;
}

const TEXTS: Record<MailLocale, AppMailTexts> = {
  en: {
    subject: (name) => `Your application "${name}" changed`,
    greeting: (username) => `Hello, ${username}!`,
    by: (who) => (who === null ? 'The operators of the service' : who),
    change: (change) => {
      switch (change.kind) {
        case 'created':
          return 'registered the application';
        case 'updated':
          return `changed its settings: ${change.fields.join(', ')}`;
        case 'disabled':
          return 'disabled the application: it signs no one in and its tokens were ended';
        case 'enabled':
          return 'enabled the application again';
        case 'deleted':
          return 'deleted the application: it signs no one in, for good, and its tokens were ended';
        case 'owner_added':
          return `added ${change.username} as a co-owner`;
        case 'owner_removed':
          return `removed ${change.username} from its owners`;
        case 'wallet_requested':
          return 'asked the operators for the wallet right';
        case 'wallet_granted':
          return 'granted the application the wallet right';
        case 'approved':
          return 'approved the application: it now signs in every user';
        case 'secret_added':
          return 'made a new client secret';
        case 'secret_revoked':
          return 'revoked a client secret';
      }
    },
    button: 'Open the developer portal',
    unexpected:
      'If you did not expect this, check the owners and secrets of the application in the developer portal.',
  },
  ru: {
    subject: (name) => `Ваше приложение «${name}» изменено`,
    greeting: (username) => `Здравствуйте, ${username}!`,
    by: (who) => (who === null ? 'Операторы сервиса' : who),
    change: (change) => {
      switch (change.kind) {
        case 'created':
          return 'регистрирует приложение';
        case 'updated':
          return `меняет его настройки: ${change.fields.join(', ')}`;
        case 'disabled':
          return 'отключает приложение: оно никого не впускает, его токены отозваны';
        case 'enabled':
          return 'снова включает приложение';
        case 'deleted':
          return 'удаляет приложение: оно больше никого не впустит, его токены отозваны';
        case 'owner_added':
          return `добавляет ${change.username} в совладельцы`;
        case 'owner_removed':
          return `убирает ${change.username} из владельцев`;
        case 'wallet_requested':
          return 'просит операторов о праве на кошелёк';
        case 'wallet_granted':
          return 'даёт приложению право на кошелёк';
        case 'approved':
          return 'одобряет приложение: теперь оно впускает всех пользователей';
        case 'secret_added':
          return 'создаёт новый секрет клиента';
        case 'secret_revoked':
          return 'отзывает секрет клиента';
      }
    },
    button: 'Открыть портал разработчика',
    unexpected: 'Если вы этого не ждали, проверьте владельцев и секреты приложения на портале разработчика.',
  },
};

function mailLocale(locale: string | null): MailLocale {
  return (MAIL_LOCALES as readonly string[]).includes(locale ?? '') ? (locale as MailLocale) : 'en';
}

/**
 * Tells every owner of the application (confirmed addresses only: an unconfirmed one may be
 * anyone's) what changed and who changed it, one message each, in the language of the latest
 * message they were sent, else English. Queued on the change's own transaction (the outbox), so a
 * change rolled back mails no one. `by`: the owner's username, or null for the operators.
 */
export async function mailOwners(
  trx: Kysely<Database>,
  ctx: Context,
  input: { clientPk: number; clientId: string; name: string; by: string | null; change: AppChange },
): Promise<void> {
  const link = `${ctx.config.PUBLIC_URL}/developers`;
  // Every change is mailed, so the outbox's hourly budget of this kind is what the changes can
  // reach: each owner of an application makes at most DEVELOPER_CHANGES_PER_HOUR, and it has at
  // most MAX_APP_OWNERS of them.
  const perHour = ctx.config.DEVELOPER_CHANGES_PER_HOUR * MAX_APP_OWNERS;
  for (const owner of await listOwnerRecipients(trx, input.clientPk)) {
    if (!owner.email || !owner.emailVerified) continue;
    const locale = mailLocale(owner.locale);
    const t = TEXTS[locale];
    const what = `${t.by(input.by)}: ${t.change(input.change)}.`;
    const app = `${input.name} (client_id ${input.clientId})`;
    await enqueueMail(trx, ctx, {
      kind: 'app_changed',
      userId: owner.userId,
      perHour,
      to: owner.email,
      locale,
      subject: t.subject(input.name.replace(/[\r\n]+/g, ' ')),
      text: `${t.greeting(owner.username)}\n\n${app}\n${what}\n\n${link}\n\n${t.unexpected}\n`,
      html:
        `<p>${escapeHtml(t.greeting(owner.username))}</p>\n<p><strong>${escapeHtml(app)}</strong><br>${escapeHtml(what)}</p>\n` +
        `<p><a href="${escapeHtml(link)}">${escapeHtml(t.button)}</a></p>\n<p>${escapeHtml(t.unexpected)}</p>\n`,
    });
  }
}

/** What mailOwners needs about a change of `client`; `by`: the owner's username, or null for the operators. */
export function change(client: Client, by: string | null, what: AppChange) {
  return { clientPk: client.id, clientId: client.clientId, name: client.name, by, change: what };
}
