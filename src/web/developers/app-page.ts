import type { FastifyReply } from 'fastify';
import type { Deps } from '../../context.js';
import { SIGNING_ALGORITHMS } from '../../lib/signing-algorithms.js';
import { listClientSecrets } from '../../modules/clients/client-secret.service.js';
import { listOwners, type OwnedApp } from '../../modules/developer-apps/apps.service.js';
import { shownProblems } from '../client-problems.js';
import type { ClientFormValues } from '../console/clients-forms.js';
import { pageLocale } from '../pages.js';
import { activitySection } from './app-activity.js';
import { appValuesFromClient } from './app-forms.js';
import { requiredDeveloper } from './developers-guard.js';
import { appStatus, renderDevelopersPage } from './developers-pages.js';
import { developersTexts } from './i18n/index.js';
import { appPath } from './paths.js';

/** The expiries the "add a secret" form offers, in seconds ('' : none). */
export const ADD_SECRET_EXPIRIES = ['', '86400', '604800', '2592000', '7776000'] as const;
/** When the "expire" form makes a secret stop working, in seconds from now (a rotation's overlap). */
export const EXPIRE_CHOICES = ['0', '3600', '86400', '604800'] as const;

/** The statuses a change redirects back with (`?done=`): anything else shows none. */
export const APP_DONE = [
  'updated',
  'unchanged',
  'wallet_requested',
  'secret_expired',
  'owner_added',
  'owner_removed',
  'disabled',
  'enabled',
] as const;

/** What a refused form of the page shows again: its values and the problem of each field. */
export interface AppPageState {
  values?: ClientFormValues;
  errors?: Readonly<Record<string, string>>;
  /** The co-owner form's typed username, shown again beside its problem. */
  username?: string;
  /** Why the deletion was refused: the name typed differs, or a co-owner tried. */
  deleteProblem?: 'wrong_name' | 'owner_only';
  /** A secret just added, shown this once. */
  secretAdded?: { client_secret: string; hint: string; expires_at: string | null };
  done?: string;
  status?: number;
}

/**
 * An application's page: its status, the settings form, the wallet request, its secrets, owners,
 * activity and deletion. Every section reads through its service (never a table).
 */
export async function renderAppPage(
  reply: FastifyReply,
  deps: Deps,
  found: OwnedApp,
  page: AppPageState = {},
): Promise<FastifyReply> {
  const { db, ctx } = deps;
  const { client, role, clientPk } = found;
  const confidential = client.token_endpoint_auth_method !== 'none';
  const secrets = confidential ? await listClientSecrets(db, ctx, client.client_id) : [];
  const owners = await listOwners(db, clientPk);
  const me = requiredDeveloper(reply.request).userId;
  const d = developersTexts(pageLocale(reply.request, reply));
  const activity = await activitySection(
    deps,
    { clientId: client.client_id, clientPk },
    { signIns: d.activityColumns.signIns, activeUsers: d.activityColumns.activeUsers },
  );
  return renderDevelopersPage(
    reply,
    deps,
    'developers/app',
    {
      title: client.name,
      client,
      role,
      base: appPath(client.client_id),
      status: appStatus(client, ctx.config.CLIENT_REGISTRATION),
      done: page.done,
      values: page.values ?? appValuesFromClient(client),
      errors: shownProblems(page.errors ?? {}, pageLocale(reply.request, reply)),
      algorithms: SIGNING_ALGORITHMS,
      confidential,
      secrets,
      addExpiries: ADD_SECRET_EXPIRIES,
      expireChoices: EXPIRE_CHOICES,
      owners: owners.map((owner) => ({
        userId: owner.userId,
        username: owner.username,
        role: owner.role,
        addedAt: owner.addedAt.toISOString(),
        // The owner removes any co-owner; a co-owner only themself; the owner is never removed.
        removable: owner.role !== 'owner' && (role === 'owner' || owner.userId === me),
      })),
      username: page.username ?? '',
      deleteProblem: page.deleteProblem ?? null,
      secretAdded: page.secretAdded ?? null,
      activity,
    },
    { status: page.status, switchBase: appPath(client.client_id) },
  );
}
