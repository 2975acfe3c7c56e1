import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { answerErrorsAsJson } from '../http/error-handler.js';
import { PASSKEY } from '../lib/amr.js';
import { ApiError } from '../lib/errors.js';
import { beginPasskeySignIn, finishPasskeySignIn } from '../modules/passkeys/passkey-sign-in.service.js';
import {
  authenticationResponse,
  passkeyName,
  registrationResponse,
} from '../modules/passkeys/passkeys.schemas.js';
import {
  beginRegistration,
  finishRegistration,
  removeUserPasskey,
  renameUserPasskey,
} from '../modules/passkeys/passkeys.service.js';
import { flowFields, flowFrom, formBody, text } from './page-forms.js';
import { requiredSession } from './page-guards.js';
import { pageLocale } from './pages.js';
import { ceremonyCookie, clearCeremonyCookie, PASSKEYS_PAGE, setCeremonyCookie } from './passkeys-section.js';
import { SECURITY_PATH } from './security-page.js';
import { loadSession } from './session.js';
import { signInBrowser } from './sign-in-completion.js';

const passkeyId = z
  .string()
  .regex(/^\d{1,9}$/)
  .transform(Number)
  .optional();
const optionalName = z.union([z.literal(''), passkeyName]).optional();

const renameForm = formBody({ csrf_token: text, passkey: passkeyId, name: text });
const removeForm = formBody({ csrf_token: text, passkey: passkeyId });
const optionsBody = z.object({ csrf_token: text });
const registerBody = z.object({ csrf_token: text, response: registrationResponse, name: optionalName });
const signInBody = z.object({ csrf_token: text, response: authenticationResponse, ...flowFields });

/** What the JSON endpoints answer for each refusal (docs/api.md's error shape). */
const REFUSALS = {
  expired: [400, 'ceremony_expired', 'The passkey request expired or was already used; start again.'],
  invalid: [400, 'passkey_invalid', 'The passkey response could not be verified.'],
  duplicate: [409, 'passkey_exists', 'This passkey is already registered.'],
  account_disabled: [403, 'account_disabled', 'The account is disabled.'],
  unknown_passkey: [401, 'passkey_refused', 'The passkey is not registered, or it could not be verified.'],
} as const;

function refused(reason: keyof typeof REFUSALS, signIn = false): ApiError {
  // A sign-in does not say whether the credential is unknown or its assertion bad: one answer for both.
  const [status, error, description] = REFUSALS[signIn && reason === 'invalid' ? 'unknown_passkey' : reason];
  return new ApiError(status, error, description);
}

async function signedInUser(request: FastifyRequest, deps: Deps): Promise<number> {
  const session = await loadSession(request, deps);
  if (!session) throw new ApiError(401, 'login_required', 'Sign in to manage passkeys.');
  return session.userId;
}

/**
 * The JSON endpoints the page script (public/passkeys.js) calls: the options of a WebAuthn
 * ceremony, then the browser's response to verify. Each is a POST with the page's CSRF token in
 * the body; errors are JSON in the contract's shape, never a page.
 */
async function passkeyApi(app: FastifyInstance, deps: Deps): Promise<void> {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  answerErrorsAsJson(app);
  const config = (description: string) => ({
    auth: 'browser' as const,
    description,
    csrf: true,
    rateLimit: 'signin' as const,
  });
  // Sudo mode: a new passkey is a new way into the account (403 reauthentication_required).
  const registration = (description: string) => ({ ...config(description), reauth: 'required' as const });

  routes.post(
    '/account/passkeys/options',
    {
      config: registration('Options to create a passkey for the signed-in account (JSON, CSRF token)'),
      schema: { body: optionsBody },
    },
    async (request, reply) => {
      const started = await beginRegistration(db, ctx, { userId: await signedInUser(request, deps) });
      if (!started) throw refused('account_disabled');
      setCeremonyCookie(request, reply, deps, started.ceremonyId);
      return { ok: true, options: started.options };
    },
  );

  routes.post(
    '/account/passkeys/verify',
    {
      config: registration("Register the browser's new passkey (JSON, CSRF token)"),
      schema: { body: registerBody },
    },
    async (request, reply) => {
      const userId = await signedInUser(request, deps);
      const result = await finishRegistration(db, ctx, {
        userId,
        ceremonyId: ceremonyCookie(request),
        response: request.body.response,
        name: request.body.name || undefined,
        locale: pageLocale(request),
        ip: request.ip,
      });
      clearCeremonyCookie(request, reply, deps);
      if (!result.ok) throw refused(result.reason);
      return { ok: true, passkey: { id: result.passkey.id, name: result.passkey.name } };
    },
  );

  routes.post(
    '/signin/passkey/options',
    {
      config: config('Options to sign in with a passkey, no username needed (JSON, CSRF token)'),
      schema: { body: optionsBody },
    },
    async (request, reply) => {
      const started = await beginPasskeySignIn(db, ctx);
      setCeremonyCookie(request, reply, deps, started.ceremonyId);
      return { ok: true, options: started.options };
    },
  );

  routes.post(
    '/signin/passkey/verify',
    {
      config: config("Sign in with the browser's passkey assertion (JSON, CSRF token); answers where to go"),
      schema: { body: signInBody },
    },
    async (request, reply) => {
      const result = await finishPasskeySignIn(db, ctx, {
        ceremonyId: ceremonyCookie(request),
        response: request.body.response,
        ip: request.ip,
      });
      clearCeremonyCookie(request, reply, deps);
      if (!result.ok) throw refused(result.reason, true);
      // A passkey with user verification is a complete sign-in: two factors in one.
      const redirect = await signInBrowser(request, reply, deps, {
        userId: result.userId,
        amr: PASSKEY,
        flow: flowFrom(request.body),
      });
      return { ok: true, redirect };
    },
  );
}

/** Passkeys: the section's page and forms, and the JSON endpoints of the ceremonies. */
export const passkeyRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  await app.register(passkeyApi, deps);

  // The passkeys live on the security page; this address leads there.
  routes.get(
    PASSKEYS_PAGE,
    { config: { auth: 'browser', description: 'Leads to the passkeys section of /account/security' } },
    async (_request, reply) => reply.redirect(`${SECURITY_PATH}#passkeys`, 303),
  );

  const form = (description: string, sudo?: { reauth: 'required' }) => ({
    auth: 'browser' as const,
    description,
    csrf: true,
    rateLimit: 'signin' as const,
    session: 'required' as const,
    switchBase: () => SECURITY_PATH,
    ...sudo,
  });

  routes.post(
    `${PASSKEYS_PAGE}/rename`,
    { config: form('Rename a passkey (form POST, CSRF token)'), schema: { body: renameForm } },
    async (request, reply) => {
      const name = passkeyName.safeParse(request.body.name ?? '');
      const id = request.body.passkey;
      if (!name.success || id === undefined)
        throw new ApiError(400, 'invalid_request', 'Give a passkey and a name of 1–64 characters.');
      const renamed = await renameUserPasskey(db, ctx, {
        userId: requiredSession(request).userId,
        passkeyId: id,
        name: name.data,
        ip: request.ip,
      });
      return reply.redirect(
        `${SECURITY_PATH}?notice=${renamed ? 'passkey_renamed' : 'unknown_passkey'}`,
        303,
      );
    },
  );

  routes.post(
    `${PASSKEYS_PAGE}/remove`,
    {
      // Sudo mode: removing a way in (a fresh proof first); a rename changes none.
      config: form('Remove a passkey (form POST, CSRF token)', { reauth: 'required' }),
      schema: { body: removeForm },
    },
    async (request, reply) => {
      const id = request.body.passkey;
      if (id === undefined) throw new ApiError(400, 'invalid_request', 'Give the passkey to remove.');
      const removed = await removeUserPasskey(db, ctx, {
        userId: requiredSession(request).userId,
        passkeyId: id,
        locale: pageLocale(request),
        ip: request.ip,
      });
      return reply.redirect(
        `${SECURITY_PATH}?notice=${removed ? 'passkey_removed' : 'unknown_passkey'}`,
        303,
      );
    },
  );
};
