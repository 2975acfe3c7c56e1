import type { clientsEn } from './en-clients.js';

/** The console's clients texts in Russian. */
export const clientsRu: typeof clientsEn = {};
