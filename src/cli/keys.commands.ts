import type { Command } from './command.js';

/** Signing key commands (`idp keys rotate`). */
export const keyCommands: Command[] = [];
