import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { type AuthenticationMethod, UPSTREAM } from '../../lib/amr.js';
import { hashSecret } from '../../lib/secrets.js';
import { isUsernameTaken } from '../accounts/accounts.repository.js';
import { UsernameTaken } from '../accounts/accounts.service.js';
import { createAccountWithoutPassword } from '../accounts/passwordless-account.service.js';
import { usernameFormatProblem } from '../accounts/sign-up.service.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { MailLocale } from '../mail/mail.service.js';
import { findProviderById, type UpstreamProvider } from './providers.repository.js';
import { findPendingIdentity, type PendingIdentity, takePendingIdentity } from './trips.repository.js';
import { linkIdentity, type TripFlow } from './upstream-sign-in.service.js';

/*
 * An identity a provider proved that no account holds yet: its person either makes a new account
 * (choosing a username) or links it to an account they prove to be theirs by signing in to it.
 * Never by a matching address alone: that is how accounts are pre-hijacked (an attacker signs up
 * with the victim's address first, or a provider vouches for an address it never verified).
 */

export interface PendingView {
  provider: UpstreamProvider;
  identity: PendingIdentity;
  suggestedUsername: string;
}

/** A username from the provider's: letters a–z, digits and _, 3–32 long, not only digits. */
function usernameFrom(text: string | null): string {
  const base = (text ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 28);
  if (base.length < 3 || /^\d+$/.test(base)) return `user_${base}`.slice(0, 28);
  return base;
}

/** The pending identity of this browser's value, with a username to suggest that is free now. */
export async function pendingIdentityOf(
  db: Kysely<Database>,
  ctx: Context,
  token: string,
): Promise<PendingView | undefined> {
  const identity = await findPendingIdentity(db, hashSecret(token), ctx.clock.now());
  const provider = identity && (await findProviderById(db, identity.providerId));
  if (!identity || !provider) return undefined;
  const base = usernameFrom(identity.suggestedUsername);
  let suggestedUsername = base;
  for (
    let n = 2;
    n <= 6 && (usernameFormatProblem(suggestedUsername) || (await isUsernameTaken(db, suggestedUsername)));
    n++
  )
    suggestedUsername = `${base}${n}`;
  return { provider, identity, suggestedUsername };
}

export type NewAccountResult =
  | { ok: true; userId: number; flow: TripFlow; amr: readonly AuthenticationMethod[] }
  | { ok: false; problem: 'username_format' | 'username_reserved' | 'username_taken' }
  | { ok: false; problem: 'expired' };

/**
 * A new account for the pending identity, under the username its person chose (the confusable
 * rule of every username applies), linked to the provider in the same transaction.
 */
export async function createAccountFromPending(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; username: string; ip: string | null },
): Promise<NewAccountResult> {
  const formatProblem = usernameFormatProblem(input.username);
  if (formatProblem) return { ok: false, problem: formatProblem };
  const pending = await findPendingIdentity(db, hashSecret(input.token), ctx.clock.now());
  if (!pending) return { ok: false, problem: 'expired' };
  if (await isUsernameTaken(db, input.username)) return { ok: false, problem: 'username_taken' };
  try {
    let flow: TripFlow = {};
    let amr: readonly AuthenticationMethod[] = UPSTREAM;
    const user = await createAccountWithoutPassword(
      db,
      ctx,
      // An address the provider did not verify is not taken over (docs/pages.md): its person adds one.
      {
        username: input.username,
        email: pending.emailVerified ? pending.email : null,
        emailVerified: pending.emailVerified,
      },
      async (trx, created) => {
        // Taken once, with the account: two submits of the form make one account.
        const taken = await takePendingIdentity(trx, hashSecret(input.token), ctx.clock.now());
        const provider = taken && (await findProviderById(trx, taken.providerId));
        if (!taken || !provider) throw new PendingGone();
        if (!(await linkIdentity(trx, ctx, created.id, provider, taken, input.ip))) throw new PendingGone();
        await recordAudit(trx, {
          at: ctx.clock.now(),
          actor: `user:${created.id}`,
          action: 'sign_up',
          subject: `user:${created.id}`,
          ip: input.ip,
          details: { via: 'provider', provider: provider.name },
        });
        flow = { requestId: taken.requestId ?? undefined, returnTo: taken.returnTo ?? undefined };
        // As at a later sign-in: the provider's `mfa` counts where the operator trusts its amr.
        if (provider.trustAmr && taken.amr.includes('mfa')) amr = ['fed', 'mfa'];
      },
    );
    return { ok: true, userId: user.id, flow, amr };
  } catch (error) {
    if (error instanceof UsernameTaken) return { ok: false, problem: 'username_taken' };
    if (error instanceof PendingGone) return { ok: false, problem: 'expired' };
    throw error;
  }
}

class PendingGone extends Error {}

/**
 * Links the pending identity to an account whose person just proved it is theirs (a complete
 * sign-in to it, recent: the caller checks). `taken`: the subject got linked elsewhere meanwhile.
 */
export async function linkPendingToAccount(
  db: Kysely<Database>,
  ctx: Context,
  input: { token: string; userId: number; ip: string | null; locale: MailLocale },
): Promise<{ ok: true; flow: TripFlow } | { ok: false; problem: 'expired' | 'taken' }> {
  const pending = await takePendingIdentity(db, hashSecret(input.token), ctx.clock.now());
  const provider = pending && (await findProviderById(db, pending.providerId));
  if (!pending || !provider) return { ok: false, problem: 'expired' };
  if (!(await linkIdentity(db, ctx, input.userId, provider, pending, input.ip, input.locale)))
    return { ok: false, problem: 'taken' };
  return {
    ok: true,
    flow: { requestId: pending.requestId ?? undefined, returnTo: pending.returnTo ?? undefined },
  };
}
