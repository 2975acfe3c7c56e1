import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidClient } from '../../lib/errors.js';
import type { Client } from '../clients/client.js';
import { type ClientWithSecretHash, findClientWithSecretHash } from '../clients/clients.repository.js';
import { clientSecretMatches } from './client-secret-match.js';

/** A client's credentials; `clientSecret` null when only `client_id` was sent. */
export interface PresentedClientCredentials {
  clientId: string;
  clientSecret: string | null;
}

/**
 * Authenticates the calling client at the token, revocation and introspection endpoints
 * (credentials read by src/http/client-credentials.ts). An unknown client, a wrong secret and a
 * disabled or deleted client get the same 401 `invalid_client`. A public client (no secret) identifies itself
 * by `client_id` alone, and only where `options.publicClients` allows it (RFC 6749 §2.1; RFC 7009
 * §2.1 lets it revoke, RFC 7662 §2.1 asks introspection callers to authenticate).
 */
export async function authenticateClient(
  db: Kysely<Database>,
  ctx: Context,
  credentials: PresentedClientCredentials,
  options: { publicClients?: boolean } = {},
): Promise<Client> {
  const client =
    credentials.clientId.length <= 200 ? await lookUpClient(db, ctx, credentials.clientId) : undefined;
  if (client?.isPublic) {
    if (credentials.clientSecret !== null || client.disabledAt !== null || client.deletedAt !== null) {
      throw new InvalidClient('Unknown client or wrong client secret.');
    }
    if (!options.publicClients) {
      throw new InvalidClient('A public client (without a secret) cannot use this endpoint.');
    }
    return client;
  }
  const matches =
    credentials.clientSecret !== null &&
    clientSecretMatches(credentials.clientSecret, client?.secrets, ctx.clock.now());
  if (!client || !matches || client.disabledAt !== null || client.deletedAt !== null) {
    throw new InvalidClient(
      credentials.clientSecret === null
        ? 'Authenticate the client with HTTP Basic (client_id:client_secret) or client_secret_post.'
        : 'Unknown client or wrong client secret.',
    );
  }
  return client;
}

/** The client by its `client_id`, from the instance's cache when it holds a fresh copy. */
export async function lookUpClient(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
): Promise<ClientWithSecretHash | undefined> {
  const now = ctx.clock.now().getTime();
  const cached = ctx.clientCache?.get(clientId, now);
  if (cached) return cached;
  const readVersion = ctx.clientCache?.readVersion ?? 0;
  const client = await findClientWithSecretHash(db, clientId, new Date(now));
  if (client) ctx.clientCache?.set(client, now, readVersion);
  return client;
}
