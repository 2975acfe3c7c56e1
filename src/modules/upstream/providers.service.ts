import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { UpstreamKind } from '../../db/schema-upstream.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { open, seal } from '../../lib/sealed-secret.js';
import { isUniqueViolation } from '../../lib/validation.js';
import { type AuditAction, type AuditEvent, recordAudit } from '../audit/audit.repository.js';
import { type OperatorActor, operatorAuditEvent } from '../operators/operator-audit.js';
import { assertServiceSealingKey } from '../sealing/sealing-key.service.js';
import { countLinksByProvider } from './links.repository.js';
import {
  type AddProviderInput,
  KIND_DEFAULTS,
  parseNewProvider,
  parseProviderChange,
  refuseForeignSettings,
  type UpdateProviderInput,
} from './provider-settings.js';
import {
  deleteProvider,
  findProviderByName,
  insertProvider,
  listProviders,
  type UpstreamProvider,
  type UpstreamProviderFields,
  updateProvider,
} from './providers.repository.js';

/** The purposes provider secrets are sealed under (lib/sealed-secret.ts). */
const SECRET_PURPOSE = 'upstream client secret';
const APPLE_KEY_PURPOSE = 'upstream apple key';

/** A provider as operators see it: never its secret or key. */
export interface ProviderView {
  name: string;
  kind: UpstreamKind;
  display_name: string;
  issuer: string;
  api_url: string | null;
  client_id: string;
  scopes: string;
  enabled: boolean;
  trust_amr: boolean;
  /** What to register at the provider as the redirect URI. */
  callback_url: string;
  linked_accounts: number;
  created_at: string;
  updated_at: string;
}

/** The redirect URI to register at the provider: the callback path is fixed. */
export function callbackUrl(ctx: Context, name: string): string {
  return `${ctx.config.PUBLIC_URL}/signin/providers/${name}/callback`;
}

function present(ctx: Context, provider: UpstreamProvider, links: number): ProviderView {
  return {
    name: provider.name,
    kind: provider.kind,
    display_name: provider.displayName,
    issuer: provider.issuer,
    api_url: provider.apiUrl,
    client_id: provider.clientId,
    scopes: provider.scopes,
    enabled: provider.enabled,
    trust_amr: provider.trustAmr,
    callback_url: callbackUrl(ctx, provider.name),
    linked_accounts: links,
    created_at: provider.createdAt.toISOString(),
    updated_at: provider.updatedAt.toISOString(),
  };
}

function sealed(ctx: Context, plain: string | undefined, purpose: string): string | undefined {
  return plain === undefined ? undefined : seal(plain, ctx.config.COOKIE_SECRET, purpose);
}

/** The secrets given, sealed, once this process is known to hold the service's key. */
async function sealedSecrets(
  db: Kysely<Database>,
  ctx: Context,
  given: { clientSecret?: string | undefined; applePrivateKey?: string | undefined },
): Promise<{ clientSecretSealed?: string; applePrivateKeySealed?: string }> {
  if (given.clientSecret === undefined && given.applePrivateKey === undefined) return {};
  await assertServiceSealingKey(db, ctx);
  return {
    clientSecretSealed: sealed(ctx, given.clientSecret, SECRET_PURPOSE),
    applePrivateKeySealed: sealed(ctx, given.applePrivateKey, APPLE_KEY_PURPOSE),
  };
}

function opened(ctx: Context, value: string | null, purpose: string): string | null {
  if (value === null) return null;
  return open(value, [ctx.config.COOKIE_SECRET, ...ctx.config.COOKIE_SECRET_PREVIOUS], purpose);
}

/** The provider's client secret, opened for the one request that sends it; null if it cannot be. */
export function clientSecretOf(ctx: Context, provider: UpstreamProvider): string | null {
  return opened(ctx, provider.clientSecretSealed, SECRET_PURPOSE);
}

/** Apple's private key (PKCS#8 PEM), opened to sign a client secret; null if it cannot be. */
export function applePrivateKeyOf(ctx: Context, provider: UpstreamProvider): string | null {
  return opened(ctx, provider.applePrivateKeySealed, APPLE_KEY_PURPOSE);
}

/** Who changes providers: the CLI (`operator`), or an operator in the console with their address. */
export type ProviderActor = string | OperatorActor;

function providerEvent(
  actor: ProviderActor,
  at: Date,
  action: AuditAction,
  subject: string,
  details: Record<string, unknown>,
): AuditEvent {
  if (typeof actor !== 'string') return operatorAuditEvent(actor, at, { action, subject, details });
  return { at, actor, action, subject, details };
}

/** The settings as audit details: which fields changed, never a secret's value. */
function auditFields(fields: Partial<UpstreamProviderFields>): Record<string, unknown> {
  const { clientSecretSealed, applePrivateKeySealed, ...plain } = fields;
  return {
    ...plain,
    ...(clientSecretSealed ? { client_secret: 'changed' } : {}),
    ...(applePrivateKeySealed ? { apple_private_key: 'changed' } : {}),
  };
}

/**
 * Adds a provider (`idp providers add`, the console). `actor` is who did it, for the audit log.
 * @throws ClientInputError for a setting a kind refuses or lacks; InvalidRequest for a taken name
 */
export async function addProvider(
  db: Kysely<Database>,
  ctx: Context,
  input: AddProviderInput,
  actor: ProviderActor,
): Promise<ProviderView> {
  const data = await parseNewProvider(input);
  const secrets = await sealedSecrets(db, ctx, data);
  const fields: UpstreamProviderFields = {
    name: data.name,
    kind: data.kind,
    displayName: data.displayName ?? data.name,
    issuer: data.issuer ?? '',
    apiUrl: data.apiUrl ?? null,
    clientId: data.clientId ?? '',
    clientSecretSealed: secrets.clientSecretSealed ?? null,
    appleTeamId: data.appleTeamId ?? null,
    appleKeyId: data.appleKeyId ?? null,
    applePrivateKeySealed: secrets.applePrivateKeySealed ?? null,
    scopes: data.scopes ?? KIND_DEFAULTS[data.kind].scopes,
    enabled: data.enabled ?? true,
    trustAmr: data.trustAmr ?? false,
  };
  const at = ctx.clock.now();
  try {
    const provider = await inTransaction(db, async (trx) => {
      const added = await insertProvider(trx, fields, at);
      await recordAudit(
        trx,
        providerEvent(actor, at, 'provider_added', `provider:${added.name}`, auditFields(fields)),
      );
      return added;
    });
    return present(ctx, provider, 0);
  } catch (error) {
    if (isUniqueViolation(error)) throw new InvalidRequest(`a provider named ${data.name} already exists`);
    throw error;
  }
}

/** Changes a provider's settings; what `input` leaves out stays. @throws NotFound, ClientInputError */
export async function changeProvider(
  db: Kysely<Database>,
  ctx: Context,
  input: UpdateProviderInput,
  actor: ProviderActor,
): Promise<ProviderView> {
  const data = await parseProviderChange(input);
  const secrets = await sealedSecrets(db, ctx, data);
  const changes: Partial<UpstreamProviderFields> = {
    displayName: data.displayName,
    issuer: data.issuer,
    apiUrl: data.apiUrl,
    clientId: data.clientId,
    clientSecretSealed: secrets.clientSecretSealed,
    appleTeamId: data.appleTeamId,
    appleKeyId: data.appleKeyId,
    applePrivateKeySealed: secrets.applePrivateKeySealed,
    scopes: data.scopes,
    enabled: data.enabled,
    trustAmr: data.trustAmr,
  };
  const at = ctx.clock.now();
  const provider = await inTransaction(db, async (trx) => {
    const current = await findProviderByName(trx, data.name);
    if (!current) throw new NotFound(`no provider named ${data.name}`);
    refuseForeignSettings(current.kind, data);
    const changed = await updateProvider(trx, data.name, changes, at);
    if (!changed) throw new NotFound(`no provider named ${data.name}`);
    await recordAudit(
      trx,
      providerEvent(actor, at, 'provider_updated', `provider:${changed.name}`, auditFields(changes)),
    );
    return changed;
  });
  return present(ctx, provider, (await countLinksByProvider(db)).get(provider.id) ?? 0);
}

/**
 * Removes a provider and every account's link to it (docs/operating.md: an account that signed in
 * only through it recovers through its e-mail address; `update --disabled` keeps the links).
 */
export async function removeProvider(
  db: Kysely<Database>,
  ctx: Context,
  name: string,
  actor: ProviderActor,
): Promise<{ name: string; links_removed: number }> {
  const at = ctx.clock.now();
  return inTransaction(db, async (trx) => {
    const links = await countLinksByProvider(trx);
    const removed = await deleteProvider(trx, name);
    if (!removed) throw new NotFound(`no provider named ${name}`);
    const linksRemoved = links.get(removed.id) ?? 0;
    await recordAudit(
      trx,
      providerEvent(actor, at, 'provider_removed', `provider:${name}`, {
        kind: removed.kind,
        links_removed: linksRemoved,
      }),
    );
    return { name, links_removed: linksRemoved };
  });
}

/** Every provider as operators see it, with how many accounts are linked to each. */
export async function listProviderViews(db: Kysely<Database>, ctx: Context): Promise<ProviderView[]> {
  const [providers, links] = await Promise.all([listProviders(db), countLinksByProvider(db)]);
  return providers.map((provider) => present(ctx, provider, links.get(provider.id) ?? 0));
}
