import type { Command } from './command.js';

/** `idp premium grant`. */
export const premiumCommands: Command[] = [];
