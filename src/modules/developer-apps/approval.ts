import type { ClientRegistrationMode } from '../../config-developers.js';

/**
 * Whether an application signs this user in (CLIENT_REGISTRATION): an approved one signs anyone
 * in; one not reviewed yet signs in only its owners and co-owners under `approval` (and under
 * `closed`, for those registered before it was closed), and anyone under `open`, where its consent
 * page says that it was not reviewed.
 */
export function appMaySignIn(
  mode: ClientRegistrationMode,
  client: { approvedAt: Date | null },
  isOwner: boolean,
): boolean {
  if (client.approvedAt !== null || isOwner) return true;
  return mode === 'open';
}
