import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../context.js';
import { clientCredentials } from '../../http/client-credentials.js';
import { tokensIssued } from '../../http/metrics.js';
import { countAuthenticatedClient } from '../../http/rate-limit.js';
import { noteRequestLog, presentedClientId } from '../../http/request-log.js';
import { InvalidRequest } from '../../lib/errors.js';
import { auditRequest } from '../audit/audit.repository.js';
import { installRefusalLog, noteClientKnown, noteClientRequest } from '../client-activity/refusal-hook.js';
import type { RefusalEndpoint } from '../client-activity/refusals.service.js';
import { startDeviceAuthorization } from '../device/device.service.js';
import { checkDpopProof } from '../dpop/dpop.service.js';
import { rollups } from '../rollups/rollup-recorder.js';
import { pushAuthorizationRequest } from './authorize/pushed.service.js';
import { authenticateClient } from './client-auth.service.js';
import { handleTokenRequest } from './grants/index.js';
import { introspectToken, revokeToken } from './revocation.service.js';

/** No OAuth parameter of ours comes near this; longer ones are refused before any work. */
const MAX_PARAMETER_LENGTH = 4096;

/** An OAuth form body as flat strings; a repeated parameter is refused (RFC 6749 §3.2). */
function formParameters(request: FastifyRequest): Record<string, string | undefined> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new InvalidRequest(
      'Send the parameters as application/x-www-form-urlencoded (RFC 6749 section 3.2).',
    );
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  const params: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string')
      throw new InvalidRequest('Each parameter must be sent once (RFC 6749 section 3.2).');
    if (value.length > MAX_PARAMETER_LENGTH || name.length > MAX_PARAMETER_LENGTH)
      throw new InvalidRequest(`A parameter is longer than ${MAX_PARAMETER_LENGTH} characters.`);
    params[name] = value;
  }
  return params;
}

function tokenTypeHintOf(hint: string | undefined): string | null {
  if (hint === undefined) return null;
  return hint === 'access_token' || hint === 'refresh_token' ? hint : 'other';
}

/**
 * The form of a client's request to one of these endpoints, whose answers, errors included,
 * no cache may keep (RFC 6749 §5.1).
 */
function clientForm(request: FastifyRequest, reply: FastifyReply): Record<string, string | undefined> {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  return formParameters(request);
}

/**
 * The token, revocation, introspection and pushed authorization request endpoints (RFC 6749 §3.2,
 * RFC 7009, RFC 7662, RFC 9126).
 */
export const oauthRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  // A refused request of a known client goes into its owners' log once answered.
  installRefusalLog(app, deps);

  /**
   * The form of a request to one of these endpoints and the client it authenticates (RFC 6749
   * §2.3.1, RFC 9126 §2); from then on the request counts against that client's rate limit.
   */
  const authenticatedForm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    endpoint: RefusalEndpoint,
    options: { publicClients?: boolean } = {},
  ) => {
    const params = clientForm(request, reply);
    const credentials = clientCredentials(request, params);
    // The client_id presented, on the request's log line, so that a refusal names the client.
    noteRequestLog(request, { client_id: presentedClientId(credentials.clientId) });
    noteClientRequest(request, endpoint, credentials.clientId, params);
    const client = await authenticateClient(deps.db, deps.ctx, credentials, options);
    noteClientKnown(request);
    countAuthenticatedClient(request, client);
    return { params, client };
  };

  app.post(
    '/api/v1/oauth/token',
    {
      config: {
        revokes: 'refused',
        auth: 'client',
        description: 'OAuth 2.0 token endpoint (authorization_code, refresh_token, RFC 8628 device_code)',
      },
    },
    async (request, reply) => {
      const { params, client } = await authenticatedForm(request, reply, 'token', { publicClients: true });
      // RFC 9449 §5: with a DPoP proof, the tokens are bound to its key.
      const proof =
        request.headers.dpop === undefined
          ? undefined
          : await checkDpopProof(deps.db, deps.ctx, {
              header: request.headers.dpop,
              method: 'POST',
              path: '/api/v1/oauth/token',
              at: 'token',
            });
      const tokens = await handleTokenRequest(deps.db, deps.ctx, client, params, proof?.jkt ?? null);
      proof?.keepKey();
      tokensIssued.inc({ grant_type: params.grant_type });
      rollups.tokens(client.clientId, params.grant_type);
      return tokens;
    },
  );

  app.post(
    '/api/v1/oauth/revoke',
    { config: { revokes: true, auth: 'client', description: 'Token revocation (RFC 7009)' } },
    async (request, reply) => {
      // RFC 7009 §2.1: a public client may revoke its tokens, identified by its client_id.
      const { params, client } = await authenticatedForm(request, reply, 'revocation', {
        publicClients: true,
      });
      await revokeToken(deps.db, deps.ctx, client, params);
      // RFC 7009 answers 200 whether or not the token was known; the log says only that it was asked.
      await auditRequest(deps.db, deps.ctx, request, {
        actor: `client:${client.clientId}`,
        action: 'token_revoked',
        // RFC 7009 §2.1 defines two hints; anything else is kept only as "other".
        details: { token_type_hint: tokenTypeHintOf(params.token_type_hint) },
      });
      return { ok: true };
    },
  );

  app.post(
    '/api/v1/oauth/introspect',
    { config: { auth: 'client', description: 'Token introspection (RFC 7662)' } },
    async (request, reply) => {
      const { params, client } = await authenticatedForm(request, reply, 'introspection');
      return introspectToken(deps.db, deps.ctx, client, params);
    },
  );

  app.post(
    '/api/v1/oauth/par',
    { config: { auth: 'client', description: 'Pushed authorization request endpoint (RFC 9126)' } },
    async (request, reply) => {
      // RFC 9126 §2: public clients push their requests too (identified by client_id; PKCE required).
      const { params, client } = await authenticatedForm(request, reply, 'par', { publicClients: true });
      // RFC 9126 §2.2: 201 Created with the request_uri and its lifetime.
      return reply.code(201).send(await pushAuthorizationRequest(deps.db, deps.ctx, client, params));
    },
  );

  app.post(
    '/api/v1/oauth/device_authorization',
    {
      config: {
        auth: 'client',
        description:
          'Device authorization endpoint (RFC 8628): a device_code to poll with and a user_code to type',
      },
    },
    async (request, reply) => {
      // RFC 8628 §3.1: public clients (a console, a command-line tool) identify with client_id alone.
      const { params, client } = await authenticatedForm(request, reply, 'device_authorization', {
        publicClients: true,
      });
      return startDeviceAuthorization(deps.db, deps.ctx, client, {
        scope: params.scope,
        deviceLabel: request.headers['user-agent'],
      });
    },
  );
};
