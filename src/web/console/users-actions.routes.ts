import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { MAIL_LOCALES, type MailLocale } from '../../modules/mail/mail-locales.js';
import type { ConsoleCapability } from '../../modules/operators/roles.js';
import { UserActionRefused } from '../../modules/user-admin/user-action-refused.js';
import {
  deleteUserAccount,
  markUserEmailVerified,
  resetUserSecondFactors,
  sendUserResetLink,
  setUserDisabled,
  signOutEverywhere,
} from '../../modules/user-admin/user-actions.service.js';
import { userDetail } from '../../modules/user-admin/user-detail.service.js';
import { grantUserPremium, moveUserCoins } from '../../modules/user-admin/user-money.service.js';
import { formBody, text } from '../page-forms.js';
import { PageError } from '../pages.js';
import { operatorActor } from './console-guard.js';
import {
  renderUser,
  USERS_PATH,
  type UserDone,
  type UserFormValues,
  userIdOf,
  userParams,
  userPath,
} from './users-pages.js';

const actionForm = formBody({
  csrf_token: text,
  lang: text,
  period: text,
  days: text,
  amount: text,
  reason: text,
  confirm: text,
});
type ActionForm = {
  lang?: string;
  period?: string;
  days?: string;
  amount?: string;
  reason?: string;
  confirm?: string;
};

/** A refusal's status: the form's own mistakes are 400, the account's state 409, no account 404. */
function statusOf(reason: string): number {
  if (reason === 'not_found') return 404;
  return reason.startsWith('invalid_') || reason === 'confirm_mismatch' ? 400 : 409;
}

/** The language of a reset message: the form's choice, English otherwise. */
const localeOf = (lang: string | undefined): MailLocale =>
  (MAIL_LOCALES as readonly string[]).includes(lang ?? '') ? (lang as MailLocale) : 'en';

interface UserAction {
  path: string;
  description: string;
  can: ConsoleCapability;
  /** The action may end tokens: the answer waits until the instance's caches know. */
  revokes?: boolean;
  done: UserDone;
  run(deps: Deps, request: FastifyRequest, userId: number, form: ActionForm): Promise<unknown>;
}

const ACTIONS: UserAction[] = [
  ...([true, false] as const).map(
    (disabled): UserAction => ({
      path: disabled ? 'disable' : 'enable',
      description: disabled
        ? 'Console: disable an account; every session, device and token ends (form POST)'
        : 'Console: enable a disabled account (form POST)',
      can: 'users',
      revokes: disabled,
      done: disabled ? 'disabled' : 'enabled',
      run: ({ db, ctx }, request, userId) =>
        setUserDisabled(db, ctx, operatorActor(request), { userId, disabled }),
    }),
  ),
  {
    path: 'sign-out',
    description: 'Console: end every browser session, app device and token of an account (form POST)',
    can: 'users',
    revokes: true,
    done: 'signed_out',
    run: ({ db, ctx }, request, userId) => signOutEverywhere(db, ctx, operatorActor(request), { userId }),
  },
  {
    path: 'reset-second-factors',
    description: "Console: remove an account's authenticator app, recovery codes and passkeys (form POST)",
    can: 'users',
    done: 'factors_reset',
    run: ({ db, ctx }, request, userId) =>
      resetUserSecondFactors(db, ctx, operatorActor(request), { userId }),
  },
  {
    path: 'send-reset',
    description: "Console: queue a password reset link to an account's address (form POST: lang)",
    can: 'users',
    done: 'reset_sent',
    run: ({ db, ctx }, request, userId, form) =>
      sendUserResetLink(db, ctx, operatorActor(request), { userId, locale: localeOf(form.lang) }),
  },
  {
    path: 'verify-email',
    description: "Console: mark an account's e-mail address verified (form POST)",
    can: 'users',
    done: 'email_verified',
    run: ({ db, ctx }, request, userId) => markUserEmailVerified(db, ctx, operatorActor(request), { userId }),
  },
  {
    path: 'premium',
    description: 'Console: grant premium days after the current period (form POST: period, days)',
    can: 'users',
    done: 'premium_granted',
    run: ({ db, ctx }, request, userId, form) =>
      grantUserPremium(db, ctx, operatorActor(request), { userId, period: form.period, days: form.days }),
  },
  ...(['credit', 'debit'] as const).map(
    (direction): UserAction => ({
      path: `wallet/${direction}`,
      description: `Console: ${direction} an account's wallet with a reason (form POST: amount, reason)`,
      can: 'wallet',
      done: direction === 'credit' ? 'credited' : 'debited',
      run: ({ db, ctx }, request, userId, form) =>
        moveUserCoins(db, ctx, operatorActor(request), {
          userId,
          direction,
          amount: form.amount,
          reason: form.reason,
        }),
    }),
  ),
  {
    path: 'delete',
    description: 'Console: delete an account, its username typed to confirm (form POST: confirm)',
    can: 'users',
    revokes: true,
    done: 'deleted',
    run: async ({ db, ctx }, request, userId, form) => {
      const detail = await userDetail(db, ctx, userId);
      if (detail && (form.confirm ?? '').trim().toLowerCase() !== detail.user.username.toLowerCase())
        throw new UserActionRefused('confirm_mismatch', 'the username typed does not match');
      return deleteUserAccount(db, ctx, operatorActor(request), { userId, locale: 'en' });
    },
  },
];

/**
 * The console's actions on an account, one POST each: every one CSRF-checked, destructive (a
 * recent second-factor proof), `users` but the wallet's (`wallet`). Each calls a user-admin service,
 * which records the operator's audit event in the change's own transaction, then redirects back with
 * `?done=`; a refusal renders the user's page with its reason and changes nothing.
 */
export const consoleUserActionRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const backToUser = (request: FastifyRequest) => userPath((request.params as { id: string }).id);

  for (const action of ACTIONS) {
    routes.post(
      `${USERS_PATH}/:id/${action.path}`,
      {
        config: {
          auth: 'browser',
          description: action.description,
          csrf: true,
          rateLimit: 'signin',
          ...(action.revokes ? { revokes: true } : {}),
          console: { can: action.can, destructive: true },
          switchBase: backToUser,
        },
        schema: { params: userParams, body: actionForm },
      },
      async (request, reply) => {
        const userId = userIdOf(request.params.id);
        try {
          await action.run(deps, request, userId, request.body);
          return reply.redirect(`${userPath(userId)}?done=${action.done}`, 303);
        } catch (error) {
          if (!(error instanceof UserActionRefused)) throw error;
          return refused(reply, userId, error.reason, request.body);
        }
      },
    );
  }

  async function refused(reply: FastifyReply, userId: number, reason: string, form: ActionForm) {
    const detail = await userDetail(deps.db, deps.ctx, userId);
    if (!detail) throw new PageError(404, 'not_found');
    const values: UserFormValues = {
      amount: form.amount,
      reason: form.reason,
      days: form.days,
      period: form.period,
    };
    return renderUser(reply, deps, { detail, refused: reason, values, status: statusOf(reason) });
  }
};
