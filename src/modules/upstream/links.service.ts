import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { isPasswordHash } from '../../lib/password.js';
import { findCredentials, lockUserById } from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { hasPasskey } from '../passkeys/passkeys.repository.js';
import { deleteLink, listLinksOfUser, type UpstreamLink } from './links.repository.js';
import { notifyLinkChange } from './upstream-mail.js';

export type { UpstreamLink } from './links.repository.js';

/** 400: unlinking would leave the account no way to sign in. */
export class LastWayToSignIn extends InvalidRequest {
  constructor() {
    super('this is the last way to sign in to the account: set a password or add a passkey first');
  }
}

/** The account's links to providers, oldest first. */
export function linksOf(db: Kysely<Database>, userId: number): Promise<UpstreamLink[]> {
  return listLinksOfUser(db, userId);
}

/** Whether the account has a password of its own (an account made through a provider has none). */
export async function hasOwnPassword(db: Kysely<Database>, username: string): Promise<boolean> {
  const credentials = await findCredentials(db, username);
  return credentials !== undefined && isPasswordHash(credentials.passwordHash);
}

/**
 * Removes one of the account's links, unless it is the last way to sign in (no password, no
 * passkey, no other link to an enabled provider). The account's row is locked, so two unlinks at once cannot each leave
 * the other as the last.
 * @throws NotFound; LastWayToSignIn
 */
export async function unlinkProvider(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; linkId: number; ip: string | null; locale: MailLocale },
): Promise<UpstreamLink> {
  return inTransaction(db, async (trx) => {
    const user = await lockUserById(trx, input.userId);
    if (!user) throw new NotFound('no such account');
    const links = await listLinksOfUser(trx, user.id);
    const removed = links.find((link) => link.id === input.linkId);
    if (!removed) throw new NotFound('no such link');
    // Only a link whose provider is enabled is a way in.
    const otherLink = links.some((link) => link.id !== input.linkId && link.providerEnabled);
    const otherWay =
      otherLink || (await hasOwnPassword(trx, user.username)) || (await hasPasskey(trx, user.id));
    if (!otherWay) throw new LastWayToSignIn();
    await deleteLink(trx, user.id, input.linkId);
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: `user:${user.id}`,
      action: 'upstream_unlinked',
      subject: `user:${user.id}`,
      ip: input.ip,
      details: { provider: removed.providerName, label: removed.label },
    });
    await notifyLinkChange(trx, ctx, {
      userId: user.id,
      change: 'unlinked',
      provider: removed.providerDisplayName,
      who: removed.label ?? removed.email ?? removed.subject,
      locale: input.locale,
    });
    return removed;
  });
}
