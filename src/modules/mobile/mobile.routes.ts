import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app.js';
import { authenticateBearer } from '../../http/bearer-auth.js';
import { AccessDenied } from '../../lib/errors.js';
import { challengeResponseSchema, sessionResponseSchema } from './mobile.schemas.js';
import {
  issueChallenge,
  logoutDevice,
  officialClient,
  refreshDevice,
  verifyDevice,
} from './mobile.service.js';

/** The longest device label kept from the User-Agent. */
const LABEL_MAX = 120;

function deviceLabel(request: FastifyRequest): string {
  const agent = request.headers['user-agent']?.replace(/\p{Cc}/gu, '').trim();
  return agent ? agent.slice(0, LABEL_MAX) : 'Mobile app';
}

/** Tokens and nonces: no cache may keep them (RFC 6749 §5.1). */
function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Sign-in for the official mobile app (CONTRACT.md §6, docs/mobile.md). The client is checked
 * first, from the body: any client but the official app gets 403 on every route, whatever else it
 * sent. Bodies are validated by the services after that check.
 */
export const mobileRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/api/v1/mobile/challenge',
    {
      config: {
        auth: 'mobile',
        description: 'Official app only: {client_id, device_id} → a single-use challenge for this device',
      },
      schema: { response: { 200: challengeResponseSchema } },
    },
    async (request, reply) => {
      const client = await officialClient(deps.db, request.body);
      noStore(reply);
      return issueChallenge(deps, client, request.body);
    },
  );

  routes.post(
    '/api/v1/mobile/verify',
    {
      config: {
        auth: 'mobile',
        description:
          'Official app only: {client_id, device_id, challenge, signature, public_key, username, password} → tokens and the profile; registers the device key',
      },
      schema: { response: { 200: sessionResponseSchema } },
    },
    async (request, reply) => {
      const client = await officialClient(deps.db, request.body);
      noStore(reply);
      return verifyDevice(deps, client, request.body, deviceLabel(request));
    },
  );

  routes.post(
    '/api/v1/mobile/refresh',
    {
      config: {
        auth: 'mobile',
        description:
          'Official app only: {client_id, device_id, refresh_token, challenge, signature} → rotated tokens',
      },
      schema: { response: { 200: sessionResponseSchema } },
    },
    async (request, reply) => {
      const client = await officialClient(deps.db, request.body);
      noStore(reply);
      return refreshDevice(deps, client, request.body);
    },
  );

  routes.post(
    '/api/v1/mobile/logout',
    {
      config: {
        auth: 'mobile',
        description:
          "Official app only, with the device's bearer token: {client_id, device_id} → signs the device out",
      },
    },
    async (request, reply) => {
      const client = await officialClient(deps.db, request.body);
      const token = await authenticateBearer(request, deps);
      if (token.clientPk !== client.id) {
        throw new AccessDenied('This access token was not issued to this client.');
      }
      noStore(reply);
      return logoutDevice(deps, client, token, request.body);
    },
  );
};
