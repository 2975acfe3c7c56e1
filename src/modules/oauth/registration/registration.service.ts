import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { inTransaction } from '../../../db/transaction.js';
import { InvalidToken, NotFound } from '../../../lib/errors.js';
import { hashesMatch, hashSecret } from '../../../lib/secrets.js';
import type { ClientView } from '../../clients/clients.schemas.js';
import { findClientDetails, updateClient } from '../../clients/clients.service.js';
import { ownerAudit, RegistrationClosed } from '../../developer-apps/app-changes.js';
import {
  createOwnedApp,
  deleteOwnedApp,
  listOwners,
  updateOwnedApp,
} from '../../developer-apps/apps.service.js';
import { deleteApp } from '../../developer-apps/delete-app.js';
import { consumeRegistrationToken } from '../../developer-apps/registration-tokens.service.js';
import { findRegistration } from './registration.repository.js';
import { RegistrationError, type RegistrationInput, registrationInput } from './registration-metadata.js';
import {
  asRegistrationError,
  type RegisteredMetadata,
  registeredMetadata,
  replacementOf,
} from './registration-view.js';

/** RFC 7591 §3.2.1 and RFC 7592 §3: the metadata with the token that manages it (and, once, the secret). */
export type RegistrationAnswer = RegisteredMetadata & {
  client_secret?: string;
  registration_access_token: string;
};

/** Who sent the request, for the audit log. */
export interface Caller {
  ip: string | null;
}

const createInput = (input: RegistrationInput) => ({
  ...input,
  idTokenAlg: input.idTokenAlg as ClientView['id_token_signed_response_alg'] | undefined,
});

function answer(view: ClientView, ctx: Context, token: string, secret?: string): RegistrationAnswer {
  const { client_id, ...metadata } = registeredMetadata(view, ctx.config.PUBLIC_URL);
  return {
    client_id,
    ...(secret === undefined ? {} : { client_secret: secret }),
    ...metadata,
    registration_access_token: token,
  };
}

const EXHAUSTED = 'The initial access token is unknown, expired or used up.';

/**
 * RFC 7591 §3: registers a client with an initial access token, through the portal's path (the
 * same validation, limits, approval rule, audit and mail). The token's use is spent in the
 * registration's own transaction: a refused registration rolls it back and spends none.
 * @throws RegistrationClosed (403), InvalidToken (401), RegistrationError (400), RateLimited (429)
 */
export async function registerClient(
  db: Kysely<Database>,
  ctx: Context,
  initialAccessToken: string,
  body: unknown,
  caller: Caller,
): Promise<RegistrationAnswer> {
  // Before the token is looked at: no token opens a closed service.
  if (ctx.config.CLIENT_REGISTRATION === 'closed') throw new RegistrationClosed();
  try {
    return await inTransaction(db, async (trx) => {
      const grant = await consumeRegistrationToken(trx, initialAccessToken, ctx.clock.now());
      if (!grant) throw new InvalidToken(EXHAUSTED);
      const created = await createOwnedApp(trx, ctx, {
        ownerUserId: grant.ownerUserId,
        input: createInput(registrationInput(body)),
        via: 'registration',
        ip: caller.ip,
      });
      if (created.registration_access_token === undefined)
        throw new Error('a registration without its registration access token');
      return answer(created, ctx, created.registration_access_token, created.client_secret);
    });
  } catch (error) {
    // The token's owner was disabled since: the token registers nothing any more.
    if (error instanceof NotFound) throw new InvalidToken(EXHAUSTED);
    throw asRegistrationError(error);
  }
}

/** Without saying whether the client exists (RFC 7592 §2.1, §2.2, §2.3: 401 for both). */
const refused = () => new InvalidToken('The registration access token is invalid for this client.');

/**
 * The registration of `clientId` when `token` is its registration access token (compared in
 * constant time); a deleted client's token works no more.
 * @throws InvalidToken
 */
async function authenticate(db: Kysely<Database>, clientId: string, token: string) {
  const presented = hashSecret(token);
  const registration = clientId.length > 200 ? undefined : await findRegistration(db, clientId);
  if (!registration || !hashesMatch(presented, registration.accessTokenHash)) throw refused();
  return registration;
}

async function currentView(db: Kysely<Database>, ctx: Context, clientId: string): Promise<ClientView> {
  const details = await findClientDetails(db, ctx, clientId);
  if (!details) throw refused();
  const { previous_secret_expires_at: _until, ...view } = details;
  return view;
}

/** The account that owns the client, whose portal limits and mails its changes go through; null: an operator's token registered it without one. */
async function ownerOf(db: Kysely<Database>, clientPk: number): Promise<number | null> {
  return (await listOwners(db, clientPk)).find((owner) => owner.role === 'owner')?.userId ?? null;
}

/**
 * RFC 7592 §2.1: the client's current metadata. Its secret is not in it (RFC 7592 §3 allows it):
 * only its hash is stored; the portal makes new secrets.
 */
export async function readRegistration(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  token: string,
): Promise<RegistrationAnswer> {
  await authenticate(db, clientId, token);
  return answer(await currentView(db, ctx, clientId), ctx, token);
}

/**
 * RFC 7592 §2.2: replaces the client's metadata (what is left out goes back to its default),
 * through the portal's change of an application (limits, audit, owners' mail). The registration
 * access token stays the same (RFC 7592 §2.2 allows a new one; the client keeps using its own).
 * @throws InvalidToken (401), RegistrationError (400), RateLimited (429)
 */
export async function replaceRegistration(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  token: string,
  body: unknown,
  caller: Caller,
): Promise<RegistrationAnswer> {
  const registration = await authenticate(db, clientId, token);
  try {
    const input = registrationInput(body);
    if ((body as { client_id?: unknown }).client_id !== clientId)
      throw new RegistrationError(
        'invalid_client_metadata',
        "client_id is required in the body and must be this client's (RFC 7592 section 2.2).",
      );
    const update = replacementOf(await currentView(db, ctx, clientId), input);
    const owner = await ownerOf(db, registration.clientPk);
    const updated =
      owner === null
        ? await updateClient(db, ctx, clientId, update, { audit: ownerAudit(ctx, null, caller.ip) })
        : await updateOwnedApp(db, ctx, owner, clientId, update, { ip: caller.ip });
    return answer(updated, ctx, token);
  } catch (error) {
    // Deleted meanwhile: as unknown as before.
    if (error instanceof NotFound) throw refused();
    throw asRegistrationError(error);
  }
}

/**
 * RFC 7592 §2.3: deletes the client as its owner would in the portal (disabled for good, its
 * tokens ended); its registration access token then works no more.
 * @throws InvalidToken (401), RateLimited (429)
 */
export async function deleteRegistration(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  token: string,
  caller: Caller,
): Promise<void> {
  const registration = await authenticate(db, clientId, token);
  const owner = await ownerOf(db, registration.clientPk);
  try {
    if (owner === null)
      await inTransaction(db, (trx) =>
        deleteApp(trx, ctx, clientId, { userId: null, username: null, ip: caller.ip }),
      );
    else await deleteOwnedApp(db, ctx, owner, clientId, { ip: caller.ip });
  } catch (error) {
    if (error instanceof NotFound) throw refused();
    throw error;
  }
}
