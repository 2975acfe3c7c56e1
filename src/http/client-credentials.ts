import type { FastifyRequest } from 'fastify';
import { decodeBasicCredentials } from '../lib/basic-credentials.js';
import { InvalidClient, InvalidRequest } from '../lib/errors.js';
import type { PresentedClientCredentials } from '../modules/oauth/client-auth.service.js';

/**
 * The client credentials of a token, revocation or introspection request: HTTP Basic
 * or client_secret_post (RFC 6749 §2.3.1), never both at once; or `client_id` alone in the body,
 * which only a public client may use (RFC 6749 §2.1, `token_endpoint_auth_method: none`).
 */
export function clientCredentials(
  request: FastifyRequest,
  body: Record<string, unknown>,
): PresentedClientCredentials {
  const header = request.headers.authorization;
  const postedId = body.client_id;
  const postedSecret = body.client_secret;
  if (header !== undefined) {
    if (postedSecret !== undefined) {
      throw new InvalidRequest(
        'Use one client authentication method: HTTP Basic or client_secret in the body, not both.',
      );
    }
    const decoded = decodeBasicCredentials(header);
    if (decoded === undefined || decoded === 'malformed') {
      throw new InvalidClient(
        'The Authorization header is not Basic client_id:client_secret, each form-urlencoded (RFC 6749 section 2.3.1).',
      );
    }
    if (postedId !== undefined && postedId !== decoded.clientId) {
      throw new InvalidRequest('client_id in the body differs from the one in the Authorization header.');
    }
    return decoded;
  }
  if (typeof postedId === 'string' && typeof postedSecret === 'string') {
    return { clientId: postedId, clientSecret: postedSecret };
  }
  if (typeof postedId === 'string' && postedSecret === undefined) {
    return { clientId: postedId, clientSecret: null };
  }
  throw new InvalidClient(
    'Authenticate the client with HTTP Basic (client_id:client_secret) or client_secret_post.',
  );
}
