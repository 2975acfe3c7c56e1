/**
 * Console roles and what each may do: the one table every console route's declaration is checked
 * against (src/web/console/console-guard.ts), so no handler decides it.
 */
export const CONSOLE_ROLES = ['owner', 'support', 'auditor'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/**
 * - `view`: read every console page;
 * - `users`: act on accounts (disable, sign out, reset second factors, reset link, verify e-mail,
 *   premium, delete);
 * - `mail`: retry e-mail and back-channel deliveries;
 * - `wallet`: credit or debit wallets;
 * - `clients`: create, change, rotate and disable applications;
 * - `keys`: rotate signing keys;
 * - `platform`: open and resolve incidents.
 */
export const CONSOLE_CAPABILITIES = [
  'view',
  'users',
  'mail',
  'wallet',
  'clients',
  'keys',
  'platform',
] as const;
export type ConsoleCapability = (typeof CONSOLE_CAPABILITIES)[number];

const GRANTS: Readonly<Record<ConsoleRole, ReadonlySet<ConsoleCapability>>> = {
  owner: new Set(CONSOLE_CAPABILITIES),
  // Support answers people: their accounts, sessions and mail; never money, applications or keys.
  support: new Set(['view', 'users', 'mail']),
  auditor: new Set(['view']),
};

export function isConsoleRole(value: unknown): value is ConsoleRole {
  return typeof value === 'string' && (CONSOLE_ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do what `capability` names. */
export function roleCan(role: ConsoleRole, capability: ConsoleCapability): boolean {
  return GRANTS[role].has(capability);
}
