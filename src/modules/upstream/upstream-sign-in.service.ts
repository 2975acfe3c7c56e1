import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { type AuthenticationMethod, UPSTREAM } from '../../lib/amr.js';
import { NotFound } from '../../lib/errors.js';
import { hashesMatch, hashSecret } from '../../lib/secrets.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { hasSecondFactor } from '../sign-in-policy/sign-in-policy.service.js';
import { findLinkedUser, insertLink, touchLink } from './links.repository.js';
import { findProviderByName, listProviders, type UpstreamProvider } from './providers.repository.js';
import { insertPendingIdentity, insertRoundTrip, takeRoundTrip } from './trips.repository.js';
import { authorizationUrl, finishAtProvider } from './upstream-client.js';
import { UpstreamFailure, type UpstreamFailureReason, type UpstreamIdentity } from './upstream-identity.js';
import { notifyLinkChange } from './upstream-mail.js';

/** A trip to a provider lasts 10 minutes, as the identity it brings back waits for a username. */
export const UPSTREAM_TRIP_TTL_MS = 10 * 60 * 1000;

/** The secrets of one trip, kept sealed in the browser that started it (never in the database). */
export interface TripChecks {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Where the person was going: an authorization request to resume, or a page of ours. */
export interface TripFlow {
  requestId?: string;
  returnTo?: string;
}

const random = () => randomBytes(32).toString('base64url');

/** The providers people may sign in with now, in the order operators added them. */
export async function enabledProviders(db: Kysely<Database>): Promise<UpstreamProvider[]> {
  return (await listProviders(db)).filter((provider) => provider.enabled);
}

/** An enabled provider by its name. @throws NotFound */
export async function enabledProvider(db: Kysely<Database>, name: string): Promise<UpstreamProvider> {
  const provider = await findProviderByName(db, name);
  if (!provider?.enabled) throw new NotFound(`no provider named ${name}`);
  return provider;
}

/**
 * Starts a trip to a provider: to sign in (or up), or, for a signed-in account (`userId`), to link
 * another sign-in to it or to prove again that its person is here (re-authentication through a
 * linked provider, for an account without a password). Returns the provider's URL and the checks the browser keeps.
 * @throws NotFound; UpstreamFailure when the provider cannot be reached
 */
export async function startUpstream(
  db: Kysely<Database>,
  ctx: Context,
  input: { provider: string; purpose: 'sign_in' | 'link' | 'reauth'; userId?: number; flow: TripFlow },
): Promise<{ url: string; checks: TripChecks }> {
  const provider = await enabledProvider(db, input.provider);
  const checks = { provider: provider.name, state: random(), nonce: random(), codeVerifier: random() };
  const url = await authorizationUrl(ctx, provider, { ...checks, fresh: input.purpose === 'reauth' });
  const at = ctx.clock.now();
  await insertRoundTrip(db, {
    stateHash: hashSecret(checks.state),
    providerId: provider.id,
    purpose: input.purpose,
    userId: input.userId ?? null,
    requestId: input.flow.requestId ?? null,
    returnTo: input.flow.returnTo ?? null,
    at,
    expiresAt: new Date(at.getTime() + UPSTREAM_TRIP_TTL_MS),
  });
  return { url, checks };
}

/** What a trip was for and where its person was going: where "Try again" leads. */
export interface TripKind {
  purpose: 'sign_in' | 'link' | 'reauth';
  flow: TripFlow;
}

/** How a callback ended, for the page to say. */
export type UpstreamOutcome =
  | { kind: 'stale' }
  | { kind: 'refused'; provider: UpstreamProvider; error: string; description: string | null; trip: TripKind }
  | { kind: 'failed'; provider: UpstreamProvider; reason: UpstreamFailureReason; trip: TripKind }
  | { kind: 'disabled'; provider: UpstreamProvider; trip: TripKind }
  | {
      kind: 'signed_in';
      provider: UpstreamProvider;
      userId: number;
      amr: readonly AuthenticationMethod[];
      secondFactor: boolean;
      flow: TripFlow;
    }
  | { kind: 'new_identity'; provider: UpstreamProvider; pending: string; flow: TripFlow }
  | { kind: 'linked'; provider: UpstreamProvider; userId: number }
  | { kind: 'reauthenticated'; provider: UpstreamProvider; userId: number; flow: TripFlow }
  | { kind: 'link_taken'; provider: UpstreamProvider }
  | { kind: 'wrong_account'; provider: UpstreamProvider };

/**
 * The provider's answer at `/signin/providers/{name}/callback`. The `state` must be the one this
 * browser's sealed checks hold and a live trip's (taken once, so a replayed answer finds nothing);
 * then the code is exchanged and checked (upstream-client). A known subject signs its account in,
 * through the account's second factor unless the operator trusts the provider's `amr` and it says
 * `mfa`; an unknown one waits as a pending identity; a trip to link links it to the account that
 * started it, if the session is still that account's.
 */
export async function finishUpstream(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    provider: string;
    callback: URL;
    checks: TripChecks | null;
    sessionUserId: number | null;
    ip: string | null;
    /** The language of the notice a new link sends to the account's address. */
    locale: MailLocale;
  },
): Promise<UpstreamOutcome> {
  const provider = await findProviderByName(db, input.provider);
  const state = input.callback.searchParams.get('state') ?? '';
  const { checks } = input;
  // A provider disabled while its trip was under way signs nobody in any more.
  if (!provider?.enabled || !checks || checks.provider !== provider.name) return { kind: 'stale' };
  if (!hashesMatch(hashSecret(state), hashSecret(checks.state))) return { kind: 'stale' };
  const trip = await takeRoundTrip(db, hashSecret(state), ctx.clock.now());
  if (!trip || trip.providerId !== provider.id) return { kind: 'stale' };
  const flow = { requestId: trip.requestId ?? undefined, returnTo: trip.returnTo ?? undefined };
  const kind: TripKind = { purpose: trip.purpose, flow };

  const error = input.callback.searchParams.get('error');
  if (error)
    return {
      kind: 'refused',
      provider,
      trip: kind,
      error: error.slice(0, 100),
      description: input.callback.searchParams.get('error_description')?.slice(0, 300) ?? null,
    };
  let identity: UpstreamIdentity;
  try {
    identity = await finishAtProvider(ctx, provider, input.callback, {
      ...checks,
      appleUser: input.callback.searchParams.get('user') ?? undefined,
    });
  } catch (failure) {
    if (!(failure instanceof UpstreamFailure)) throw failure;
    await recordAudit(db, {
      at: ctx.clock.now(),
      actor: 'anonymous',
      action: 'upstream_sign_in_failed',
      subject: `provider:${provider.name}`,
      ip: input.ip,
      details: { reason: failure.reason, detail: failure.detail },
    });
    return { kind: 'failed', provider, reason: failure.reason, trip: kind };
  }
  const key = { providerId: provider.id, issuer: identity.issuer, subject: identity.subject };

  if (trip.purpose === 'link') {
    if (trip.userId === null || trip.userId !== input.sessionUserId)
      return { kind: 'wrong_account', provider };
    return (await linkIdentity(db, ctx, trip.userId, provider, identity, input.ip, input.locale))
      ? { kind: 'linked', provider, userId: trip.userId }
      : { kind: 'link_taken', provider };
  }

  const userId = await findLinkedUser(db, key);
  if (trip.purpose === 'reauth') {
    // The same person again: the provider's subject must be one linked to the session's account.
    if (trip.userId === null || trip.userId !== input.sessionUserId || userId !== trip.userId)
      return { kind: 'wrong_account', provider };
    await touchLink(db, key, ctx.clock.now());
    return { kind: 'reauthenticated', provider, userId, flow };
  }
  if (userId === undefined) {
    const pending = random();
    const at = ctx.clock.now();
    await insertPendingIdentity(db, {
      tokenHash: hashSecret(pending),
      providerId: provider.id,
      ...identity,
      requestId: trip.requestId,
      returnTo: trip.returnTo,
      at,
      expiresAt: new Date(at.getTime() + UPSTREAM_TRIP_TTL_MS),
    });
    return { kind: 'new_identity', provider, pending, flow };
  }
  const user = await findUserById(db, userId);
  if (!user || user.deletedAt) return { kind: 'stale' };
  if (user.disabledAt) return { kind: 'disabled', provider, trip: kind };
  await touchLink(db, key, ctx.clock.now());
  // docs/pages.md: the provider's `mfa` stands in for the account's own second factor only where
  // the operator said to trust that provider's `amr`.
  const trustedMfa = provider.trustAmr && identity.amr.includes('mfa');
  const amr: AuthenticationMethod[] = trustedMfa ? ['fed', 'mfa'] : [...UPSTREAM];
  const secondFactor = !trustedMfa && (await hasSecondFactor(db, userId));
  return { kind: 'signed_in', provider, userId, amr, secondFactor, flow };
}

/**
 * Links the identity to the account, in one transaction with its audit event and, for an account
 * that existed before (`notice`: the language to write in), the notice to its confirmed address;
 * false when the subject is linked already (here or elsewhere).
 */
export async function linkIdentity(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
  provider: UpstreamProvider,
  identity: Pick<UpstreamIdentity, 'issuer' | 'subject' | 'email' | 'label'>,
  ip: string | null,
  notice?: MailLocale,
): Promise<boolean> {
  const at = ctx.clock.now();
  return inTransaction(db, async (trx) => {
    const linked = await insertLink(trx, {
      userId,
      providerId: provider.id,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      label: identity.label,
      at,
    });
    if (!linked) return false;
    await recordAudit(trx, {
      at,
      actor: `user:${userId}`,
      action: 'upstream_linked',
      subject: `user:${userId}`,
      ip,
      details: { provider: provider.name, label: identity.label },
    });
    if (notice)
      await notifyLinkChange(trx, ctx, {
        userId,
        change: 'linked',
        provider: provider.displayName,
        who: identity.label ?? identity.email ?? identity.subject,
        locale: notice,
      });
    return true;
  });
}
