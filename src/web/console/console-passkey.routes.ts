import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { answerErrorsAsJson } from '../../http/error-handler.js';
import { ApiError } from '../../lib/errors.js';
import { openConsoleSession, reproveConsoleSession } from '../../modules/operators/console-access.service.js';
import { beginPasskeySignIn, finishPasskeySignIn } from '../../modules/passkeys/passkey-sign-in.service.js';
import { authenticationResponse } from '../../modules/passkeys/passkeys.schemas.js';
import { text } from '../page-forms.js';
import { ceremonyCookie, clearCeremonyCookie, setCeremonyCookie } from '../passkeys-section.js';
import { requiredOperator } from './console-guard.js';
import { loadConsoleSession, setConsoleCookie } from './console-session.js';
import { consoleReturnPath } from './enter.routes.js';

const optionsBody = z.object({ csrf_token: text });
const verifyBody = z.object({ csrf_token: text, response: authenticationResponse, return_to: text });

/**
 * The passkey way into the console: the ceremony's options, then the assertion, checked as a
 * passkey sign-in is (user verification required: two factors in one) and only for the operator
 * already signed in. With a console session it is a new proof (re-authentication); without, it
 * opens one. JSON in and out, for public/passkeys.js.
 */
export const consolePasskeyRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();
  answerErrorsAsJson(app);
  const config = (description: string) => ({
    auth: 'browser' as const,
    description,
    csrf: true,
    rateLimit: 'signin' as const,
    console: { entry: true as const },
  });

  routes.post(
    '/admin/enter/passkey/options',
    {
      config: config('Options to prove the console session with a passkey (JSON, CSRF token)'),
      schema: { body: optionsBody },
    },
    async (request, reply) => {
      const started = await beginPasskeySignIn(db, ctx);
      setCeremonyCookie(request, reply, deps, started.ceremonyId);
      return { ok: true, options: started.options };
    },
  );

  routes.post(
    '/admin/enter/passkey/verify',
    {
      config: config(
        "Enter the console, or prove it again, with the browser's passkey assertion (JSON, CSRF token)",
      ),
      schema: { body: verifyBody },
    },
    async (request, reply) => {
      const operator = requiredOperator(request);
      const result = await finishPasskeySignIn(db, ctx, {
        ceremonyId: ceremonyCookie(request),
        response: request.body.response,
        ip: request.ip,
      });
      clearCeremonyCookie(request, reply, deps);
      // Another account's passkey proves nothing about this operator.
      if (!result.ok || result.userId !== operator.userId)
        throw new ApiError(
          401,
          'passkey_refused',
          'The passkey is not registered, or it could not be verified.',
        );
      const session = await loadConsoleSession(request, deps, operator.account);
      if (session) await reproveConsoleSession(db, ctx, { session, method: 'passkey', ip: request.ip });
      else {
        const opened = await openConsoleSession(db, ctx, {
          userId: operator.userId,
          accountSessionHash: operator.account.idHash,
          method: 'passkey',
          ip: request.ip,
        });
        setConsoleCookie(request, reply, deps, opened.value);
      }
      return { ok: true, redirect: consoleReturnPath(request.body.return_to) };
    },
  );
};
