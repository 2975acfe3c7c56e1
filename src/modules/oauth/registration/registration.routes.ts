import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../context.js';
import { Unauthorized } from '../../../lib/errors.js';
import { RegistrationClosed } from '../../developer-apps/app-changes.js';
import {
  deleteRegistration,
  readRegistration,
  registerClient,
  replaceRegistration,
} from './registration.service.js';
import { RegistrationError } from './registration-metadata.js';

/** `Authorization: Bearer <token>` (RFC 6750 §2.1): the scheme name is case-insensitive. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The token of the Authorization header: the initial access token (RFC 7591 §3) or the
 * registration access token (RFC 7592 §3).
 * @throws Unauthorized without one (RFC 6750 §3.1: no error attribute then).
 */
function presentedToken(request: FastifyRequest, what: string): string {
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (token === undefined) throw new Unauthorized(`Send the ${what} as "Authorization: Bearer <token>".`);
  return token;
}

/** The JSON body (RFC 7591 §3.1, RFC 7592 §2.2): another content type is refused, not guessed at. */
function metadataOf(request: FastifyRequest): unknown {
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? ''))
    throw new RegistrationError(
      'invalid_client_metadata',
      'Send the client metadata as a JSON object with Content-Type: application/json (RFC 7591 section 3.1).',
    );
  return request.body;
}

/** RFC 7591 §3.2.1, RFC 7592 §3: answers carry secrets and tokens, errors included: no cache keeps them. */
function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

const INITIAL = 'initial access token';
const MANAGEMENT = 'registration access token';

/** RFC 7591 dynamic client registration and RFC 7592 management of what it registered. */
export const registrationRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  app.post(
    '/api/v1/oauth/register',
    {
      config: {
        auth: 'bearer',
        description: 'Dynamic client registration (RFC 7591), with an initial access token',
      },
    },
    async (request, reply) => {
      noStore(reply);
      // A closed service says so to anyone, token or not.
      if (deps.ctx.config.CLIENT_REGISTRATION === 'closed') throw new RegistrationClosed();
      const token = presentedToken(request, INITIAL);
      const registered = await registerClient(deps.db, deps.ctx, token, metadataOf(request), {
        ip: request.ip,
      });
      return reply.code(201).send(registered);
    },
  );

  const route = '/api/v1/oauth/register/:client_id';
  const clientIdOf = (request: FastifyRequest) => (request.params as { client_id: string }).client_id;

  app.get(
    route,
    {
      config: {
        auth: 'bearer',
        description: "A registered client's metadata (RFC 7592), with its registration access token",
      },
    },
    async (request, reply) => {
      noStore(reply);
      const token = presentedToken(request, MANAGEMENT);
      return readRegistration(deps.db, deps.ctx, clientIdOf(request), token);
    },
  );

  app.put(
    route,
    {
      config: {
        auth: 'bearer',
        description: "Replaces a registered client's metadata (RFC 7592), with its registration access token",
      },
    },
    async (request, reply) => {
      noStore(reply);
      const token = presentedToken(request, MANAGEMENT);
      return replaceRegistration(deps.db, deps.ctx, clientIdOf(request), token, metadataOf(request), {
        ip: request.ip,
      });
    },
  );

  app.delete(
    route,
    {
      config: {
        revokes: true,
        auth: 'bearer',
        description: 'Deletes a registered client (RFC 7592), with its registration access token',
      },
    },
    async (request, reply) => {
      noStore(reply);
      const token = presentedToken(request, MANAGEMENT);
      await deleteRegistration(deps.db, deps.ctx, clientIdOf(request), token, { ip: request.ip });
      return reply.code(204).send();
    },
  );
};
