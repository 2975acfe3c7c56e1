import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { type AccessTokenContext, authenticateBearer } from '../../http/bearer-auth.js';
import { tokensIssued } from '../../http/metrics.js';
import { RequestValues } from '../../http/request-values.js';
import { bestLanguage } from '../../lib/accept-language.js';
import { AccessDenied, ApiError } from '../../lib/errors.js';
import { auditRequest } from '../audit/audit.repository.js';
import type { Client } from '../clients/client.js';
import { MAIL_LOCALES, type MailLocale } from '../mail/mail.service.js';
import { rollups } from '../rollups/rollup-recorder.js';
import { issueChallenge } from './challenge.service.js';
import { logoutDevice } from './devices.service.js';
import {
  challengeBodySchema,
  challengeResponseSchema,
  logoutBodySchema,
  refreshBodySchema,
  secondFactorBodySchema,
  sessionResponseSchema,
  verifyBodySchema,
  verifyForbiddenResponseSchema,
} from './mobile.schemas.js';
import { officialClient } from './mobile.service.js';
import { refreshDevice } from './refresh.service.js';
import { finishMobileSecondStep } from './second-step.service.js';
import { verifyDevice } from './sign-in.service.js';

/** The longest device label kept from the User-Agent. */
const LABEL_MAX = 120;

function deviceLabel(request: FastifyRequest): string {
  const agent = request.headers['user-agent']?.replace(/\p{Cc}/gu, '').trim();
  return agent ? agent.slice(0, LABEL_MAX) : 'Mobile app';
}

/** The language of a mail the request causes (the owner's warning): the app's `Accept-Language`. */
function mailLocale(request: FastifyRequest): MailLocale {
  return bestLanguage(request.headers['accept-language'], MAIL_LOCALES, 'en');
}

/** Tokens and nonces: no cache may keep them (RFC 6749 §5.1). */
function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Sign-in for the official mobile app (docs/mobile.md). The client is checked
 * first, in preValidation (after the body is parsed, before it is validated): any client but the
 * official app gets 403 on every route, whatever else it sent. Logout then needs the device's
 * bearer token. Only then is the body validated (400 invalid_request).
 */
export const mobileRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const clients = new RequestValues<Client>('requireOfficialClient');
  const tokens = new RequestValues<AccessTokenContext>('requireDeviceToken');

  const requireOfficialClient = async (request: FastifyRequest): Promise<void> => {
    clients.set(request, await officialClient(deps.db, request.body));
  };
  const requireDeviceToken = async (request: FastifyRequest): Promise<void> => {
    await requireOfficialClient(request);
    const token = await authenticateBearer(request, deps);
    if (token.clientPk !== clients.of(request).id) {
      throw new AccessDenied('This access token was not issued to this client.');
    }
    tokens.set(request, token);
  };

  routes.post(
    '/api/v1/mobile/challenge',
    {
      config: {
        auth: 'mobile',
        description: 'Official app only: {client_id, device_id} → a single-use challenge for this device',
      },
      schema: { body: challengeBodySchema, response: { 200: challengeResponseSchema } },
      preValidation: requireOfficialClient,
    },
    async (request, reply) => {
      noStore(reply);
      return issueChallenge(deps.db, deps.ctx, clients.of(request), request.body);
    },
  );

  routes.post(
    '/api/v1/mobile/verify',
    {
      config: {
        auth: 'mobile',
        description:
          'Official app only: {client_id, device_id, challenge, signature, public_key, username, password} → tokens and the profile, registering the device key; 403 mfa_required with an mfa_token for an account with a second factor',
        // No per-account minute limit: the account's database budget, counted after the device
        // signature per account and device, bounds the guesses (docs/operating.md).
        rateLimit: 'signin',
      },
      schema: {
        body: verifyBodySchema,
        response: { 200: sessionResponseSchema, 403: verifyForbiddenResponseSchema },
      },
      preValidation: requireOfficialClient,
    },
    async (request, reply) => {
      noStore(reply);
      const client = clients.of(request);
      try {
        const outcome = await verifyDevice(deps.db, deps.ctx, client, request.body, deviceLabel(request));
        if (outcome.kind === 'mfa_required') {
          // As the sign-in page: the password step is recorded, and no token is issued.
          await auditRequest(deps.db, deps.ctx, request, {
            actor: `user:${outcome.userId}`,
            action: 'sign_in',
            subject: `user:${outcome.userId}`,
            details: { via: 'mobile', second_factor: 'pending', device_id: request.body.device_id },
          });
          return reply.code(403).send(outcome.body);
        }
        tokensIssued.inc({ grant_type: 'mobile_verify' });
        rollups.tokens(client.clientId, 'mobile_verify');
        await auditRequest(deps.db, deps.ctx, request, {
          actor: `user:${String(outcome.userId)}`,
          action: 'device_signed_in',
          subject: `client:${client.clientId}`,
          details: { device_id: request.body.device_id },
        });
        return outcome.session;
      } catch (error) {
        if (error instanceof ApiError && error.error === 'invalid_grant') {
          await auditRequest(deps.db, deps.ctx, request, {
            actor: 'anonymous',
            action: 'sign_in_failed',
            subject: `username:${request.body.username.trim().toLowerCase().slice(0, 64)}`,
            details: { via: 'mobile', device_id: request.body.device_id },
          });
        }
        throw error;
      }
    },
  );

  routes.post(
    '/api/v1/mobile/verify/second-factor',
    {
      config: {
        auth: 'mobile',
        description:
          'Official app only: {client_id, device_id, mfa_token, code, challenge, signature} → tokens and the profile, as verify; the second step of an account with a second factor',
        rateLimit: 'signin',
      },
      schema: { body: secondFactorBodySchema, response: { 200: sessionResponseSchema } },
      preValidation: requireOfficialClient,
    },
    async (request, reply) => {
      noStore(reply);
      const client = clients.of(request);
      const { session, userId, method } = await finishMobileSecondStep(deps.db, deps.ctx, client, {
        ...request.body,
        label: deviceLabel(request),
        ip: request.ip,
        locale: mailLocale(request),
      });
      tokensIssued.inc({ grant_type: 'mobile_verify' });
      rollups.tokens(client.clientId, 'mobile_verify');
      await auditRequest(deps.db, deps.ctx, request, {
        actor: `user:${userId}`,
        action: 'device_signed_in',
        subject: `client:${client.clientId}`,
        details: { device_id: request.body.device_id, second_factor: method },
      });
      return session;
    },
  );

  routes.post(
    '/api/v1/mobile/refresh',
    {
      config: {
        revokes: true,
        auth: 'mobile',
        description:
          'Official app only: {client_id, device_id, refresh_token, challenge, signature} → rotated tokens',
      },
      schema: { body: refreshBodySchema, response: { 200: sessionResponseSchema } },
      preValidation: requireOfficialClient,
    },
    async (request, reply) => {
      noStore(reply);
      const session = await refreshDevice(deps.db, deps.ctx, clients.of(request), request.body);
      tokensIssued.inc({ grant_type: 'mobile_refresh' });
      rollups.tokens(clients.of(request).clientId, 'mobile_refresh');
      return session;
    },
  );

  routes.post(
    '/api/v1/mobile/logout',
    {
      config: {
        revokes: true,
        auth: 'mobile',
        description:
          "Official app only, with the device's bearer token: {client_id, device_id} → signs the device out",
      },
      schema: { body: logoutBodySchema, response: { 200: z.object({ ok: z.literal(true) }) } },
      preValidation: requireDeviceToken,
    },
    async (request, reply) => {
      noStore(reply);
      const token = tokens.of(request);
      const result = await logoutDevice(deps.db, deps.ctx, clients.of(request), token, request.body);
      await auditRequest(deps.db, deps.ctx, request, {
        actor: `user:${token.userId}`,
        action: 'device_signed_out',
        subject: `client:${clients.of(request).clientId}`,
        details: { via: 'mobile logout', device_id: request.body.device_id },
      });
      return result;
    },
  );
};
