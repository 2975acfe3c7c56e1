import type { Deps } from '../context.js';
import type { Client } from '../modules/clients/client.js';
import { appMaySignIn } from '../modules/developer-apps/approval.js';
import { isOwnerOf } from '../modules/developer-apps/owners.repository.js';
import { PageError } from './error-pages.js';

/**
 * CLIENT_REGISTRATION=approval: an application its owners registered signs in only them until an
 * operator approves it; anyone else gets a page saying it awaits review (never a redirect to it:
 * an unreviewed site learns nothing of who tried).
 * @throws PageError (403 `app_awaits_review`)
 */
export async function refuseUnreviewedApp(deps: Deps, client: Client, userId: number): Promise<void> {
  const mode = deps.ctx.config.CLIENT_REGISTRATION;
  if (appMaySignIn(mode, client, false)) return;
  if (appMaySignIn(mode, client, await isOwnerOf(deps.db, client.id, userId))) return;
  throw new PageError(403, 'app_awaits_review');
}
