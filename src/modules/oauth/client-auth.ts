import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { type BasicCredentials, decodeBasicCredentials } from '../../lib/basic-credentials.js';
import { InvalidClient, InvalidRequest } from '../../lib/errors.js';
import { hashSecret, secretMatchesHash } from '../../lib/secrets.js';
import type { ClientRow } from '../clients/clients.repository.js';
import { findClientByClientId } from '../clients/clients.repository.js';

/** Compared against when the client is unknown, so that answer takes as long as a wrong secret. */
const DUMMY_HASH = hashSecret('no such client');

type PresentedCredentials = BasicCredentials;

/**
 * Authenticates the calling client at the token, revocation and introspection endpoints:
 * HTTP Basic (SPEC.md) or client_secret_post (RFC 6749 §2.3.1), never both at once. An unknown
 * client, a wrong secret and a disabled client get the same 401 `invalid_client`.
 */
export async function authenticateClient(
  request: FastifyRequest,
  body: Record<string, unknown>,
  db: Kysely<Database>,
  ctx: Pick<Context, 'clock' | 'clientCache'>,
): Promise<ClientRow> {
  const header = request.headers.authorization;
  const postedId = body.client_id;
  const postedSecret = body.client_secret;
  let credentials: PresentedCredentials;
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
    credentials = decoded;
    if (postedId !== undefined && postedId !== credentials.clientId) {
      throw new InvalidRequest('client_id in the body differs from the one in the Authorization header.');
    }
  } else if (typeof postedId === 'string' && typeof postedSecret === 'string') {
    credentials = { clientId: postedId, clientSecret: postedSecret };
  } else {
    throw new InvalidClient(
      'Authenticate the client with HTTP Basic (client_id:client_secret) or client_secret_post.',
    );
  }

  const client =
    credentials.clientId.length <= 200 ? await lookUpClient(db, ctx, credentials.clientId) : undefined;
  const matches = secretMatchesHash(credentials.clientSecret, client?.secret_hash ?? DUMMY_HASH);
  if (!client || !matches || client.disabled_at !== null) {
    throw new InvalidClient('Unknown client or wrong client secret.');
  }
  return client;
}

/** The client by its `client_id`, from the instance's cache when it holds a fresh copy. */
export async function lookUpClient(
  db: Kysely<Database>,
  ctx: Pick<Context, 'clock' | 'clientCache'>,
  clientId: string,
): Promise<ClientRow | undefined> {
  const now = ctx.clock.now().getTime();
  const cached = ctx.clientCache?.get(clientId, now);
  if (cached) return cached;
  const readVersion = ctx.clientCache?.readVersion ?? 0;
  const client = await findClientByClientId(db, clientId);
  if (client) ctx.clientCache?.set(client, now, readVersion);
  return client;
}
