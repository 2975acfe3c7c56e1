import type { Deps } from '../context.js';

/** What the passkeys part of `/account/security` shows (views/security-passkeys.ejs). */
export interface PasskeySection {
  items: unknown[];
  [more: string]: unknown;
}

/** The passkeys of the user, for views/security-passkeys.ejs (CONTRACT.md §8); none until passkeys land. */
export async function passkeySectionData(_deps: Deps, _userId: number): Promise<PasskeySection> {
  return { items: [] };
}
