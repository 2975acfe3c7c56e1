import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { listAuditEventsAbout, recordAudit } from '../audit/audit.repository.js';
import { findClientsByIds } from '../clients/clients.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { countUnusedRecoveryCodes } from '../mfa/recovery-codes.repository.js';
import { findTotpCredential } from '../mfa/totp.repository.js';
import { listSignedInDevices } from '../mobile/devices.service.js';
import { listConsentsOfUser } from '../oauth/consents.repository.js';
import { listLiveGrantsOfUser } from '../oauth/grants.repository.js';
import { listPasskeys } from '../passkeys/passkeys.repository.js';
import { listPeriodsOfUser } from '../premium/premium.repository.js';
import { listLinksOfUser } from '../upstream/links.repository.js';
import { findBalance, listEntriesOfUser } from '../wallet/wallet.repository.js';
import { toCoins } from '../wallet/wallet.schemas.js';
import { enqueueAccountNotice } from './account-notice-mail.js';
import { findUserById } from './accounts.repository.js';
import { listSessionsOfUser } from './sessions.repository.js';

/** A time as the export writes it (ISO 8601, UTC), or null. */
function iso(value: Date | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}

/**
 * Everything stored about a user, as `/account/export` downloads it (GDPR art. 15
 * and 20). Built from each table's owning repository, whose domain objects never carry a secret:
 * no password hash, username skeleton, session id, token, code or key hash, device key, passkey
 * credential or public key, client secret or idempotency key appears in it.
 */
export interface AccountExport {
  format: 'idp-account-export';
  version: 1;
  exported_at: string;
  profile: Record<string, string | number | boolean | null>;
  premium_periods: Array<Record<string, string | null>>;
  apps: Array<Record<string, unknown>>;
  grants: Array<Record<string, unknown>>;
  devices: Array<Record<string, unknown>>;
  wallet: { currency: 'COIN'; balance: number; entries: Array<Record<string, unknown>> };
  browser_sessions: Array<Record<string, string | null>>;
  /** Whether two-step sign-in is on and how many recovery codes are left: never the key or a code. */
  second_factors: {
    totp: 'off' | 'pending' | 'on';
    totp_enabled_at: string | null;
    recovery_codes_unused: number;
  };
  /** Each passkey's name and dates: never its credential id or public key. */
  passkeys: Array<{ name: string; created_at: string | null; last_used_at: string | null }>;
  /** Sign-ins through other providers linked to the account. */
  linked_providers: Array<{
    provider: string;
    subject: string;
    email: string | null;
    label: string | null;
    linked_at: string | null;
    last_used_at: string | null;
  }>;
  audit_events: Array<Record<string, unknown>>;
}

/**
 * The data export of a signed-in user, read in one transaction (one consistent picture) that also
 * records the `account_exported` audit event, so the export lists its own event. Undefined when
 * the user does not exist.
 */
export function exportAccountData(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; ip: string | null; locale?: MailLocale },
): Promise<AccountExport | undefined> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserById(trx, input.userId);
    if (!user) return undefined;
    const at = ctx.clock.now();
    const self = `user:${user.id}`;
    await recordAudit(trx, { at, actor: self, action: 'account_exported', subject: self, ip: input.ip });
    await enqueueAccountNotice(trx, ctx, { user, notice: 'account_exported', locale: input.locale ?? 'en' });

    const periods = await listPeriodsOfUser(trx, user.id);
    const consents = await listConsentsOfUser(trx, user.id);
    const grants = (await listLiveGrantsOfUser(trx, user.id)).rows;
    const devices = await listSignedInDevices(trx, user.id);
    const balance = await findBalance(trx, user.id);
    const entries = await listEntriesOfUser(trx, user.id);
    const sessions = await listSessionsOfUser(trx, user.id);
    const totp = await findTotpCredential(trx, user.id);
    const recoveryCodesUnused = await countUnusedRecoveryCodes(trx, user.id);
    const passkeys = await listPasskeys(trx, user.id);
    const links = await listLinksOfUser(trx, user.id);
    const events = await listAuditEventsAbout(trx, user);
    const clientIds = [
      ...new Set(entries.flatMap((entry) => (entry.clientPk === null ? [] : [entry.clientPk]))),
    ];
    const clients = new Map((await findClientsByIds(trx, clientIds)).map((client) => [client.id, client]));

    return {
      format: 'idp-account-export',
      version: 1,
      exported_at: at.toISOString(),
      profile: {
        id: user.id,
        username: user.username,
        display_name: user.displayName,
        email: user.email,
        email_verified: user.emailVerified,
        verification_level: user.verificationLevel,
        avatar_url: user.avatarUrl,
        game_name: user.gameName,
        game_url: user.gameUrl,
        tag_label: user.tagLabel,
        tag_kind: user.tagKind,
        tag_slug: user.tagSlug,
        disabled_at: iso(user.disabledAt),
        deleted_at: iso(user.deletedAt),
        created_at: iso(user.createdAt),
        updated_at: iso(user.updatedAt),
      },
      premium_periods: periods.map((period) => ({
        billing_period: period.billingPeriod,
        starts_at: iso(period.startsAt),
        ends_at: iso(period.endsAt),
        created_at: iso(period.createdAt),
      })),
      apps: consents.map((consent) => ({
        client_id: consent.clientId,
        name: consent.name,
        site_url: consent.siteUrl,
        scopes: consent.scopes,
        allowed_at: iso(consent.createdAt),
        updated_at: iso(consent.updatedAt),
      })),
      grants: grants.map((grant) => ({
        client_id: grant.clientId,
        client_name: grant.clientName,
        scopes: grant.scopes,
        signed_in_at: iso(grant.authTime),
        created_at: iso(grant.createdAt),
      })),
      devices: devices.map((device) => ({
        label: device.label,
        signed_in_at: iso(device.signedInAt),
        last_used_at: iso(device.lastUsedAt),
      })),
      wallet: {
        currency: 'COIN',
        balance: toCoins(balance),
        entries: entries.map((entry) => {
          const client = entry.clientPk === null ? undefined : clients.get(entry.clientPk);
          return {
            id: entry.publicId,
            type: entry.type,
            amount: toCoins(entry.amount),
            balance_after: toCoins(entry.balanceAfter),
            description: entry.description,
            client: client ? { client_id: client.clientId, name: client.name } : null,
            created_at: iso(entry.createdAt),
          };
        }),
      },
      browser_sessions: sessions.map((session) => ({
        signed_in_at: iso(session.authTime),
        created_at: iso(session.createdAt),
        expires_at: iso(session.expiresAt),
        user_agent: session.userAgent,
        ip: session.ip,
      })),
      second_factors: {
        totp: !totp ? 'off' : totp.confirmedAt ? 'on' : 'pending',
        totp_enabled_at: totp?.confirmedAt ? iso(totp.confirmedAt) : null,
        recovery_codes_unused: recoveryCodesUnused,
      },
      passkeys: passkeys.map((passkey) => ({
        name: passkey.name,
        created_at: iso(passkey.createdAt),
        last_used_at: iso(passkey.lastUsedAt),
      })),
      linked_providers: links.map((link) => ({
        provider: link.providerDisplayName,
        subject: link.subject,
        email: link.email,
        label: link.label,
        linked_at: iso(link.createdAt),
        last_used_at: iso(link.lastUsedAt),
      })),
      audit_events: events.map((event) => ({
        at: iso(event.at),
        actor: event.actor,
        action: event.action,
        subject: event.subject,
        ip: event.ip,
        details: event.details,
      })),
    };
  });
}
