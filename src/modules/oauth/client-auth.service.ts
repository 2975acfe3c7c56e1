import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { BasicCredentials } from '../../lib/basic-credentials.js';
import { InvalidClient } from '../../lib/errors.js';
import { hashSecret, secretMatchesHash } from '../../lib/secrets.js';
import type { Client } from '../clients/client.js';
import { type ClientWithSecretHash, findClientWithSecretHash } from '../clients/clients.repository.js';

/** Compared against when the client is unknown, so that answer takes as long as a wrong secret. */
const DUMMY_HASH = hashSecret('no such client');

/**
 * Authenticates the calling client at the token, revocation and introspection endpoints
 * (credentials read by src/http/client-credentials.ts). An unknown client, a wrong secret and a
 * disabled client get the same 401 `invalid_client`.
 */
export async function authenticateClient(
  db: Kysely<Database>,
  ctx: Context,
  credentials: BasicCredentials,
): Promise<Client> {
  const client =
    credentials.clientId.length <= 200 ? await lookUpClient(db, ctx, credentials.clientId) : undefined;
  const matches = secretMatchesHash(credentials.clientSecret, client?.secretHash ?? DUMMY_HASH);
  if (!client || !matches || client.disabledAt !== null) {
    throw new InvalidClient('Unknown client or wrong client secret.');
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
  const client = await findClientWithSecretHash(db, clientId);
  if (client) ctx.clientCache?.set(client, now, readVersion);
  return client;
}
