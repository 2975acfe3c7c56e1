import type { usersEn } from './en-users.js';

/** The console's users texts in Russian. */
export const usersRu: typeof usersEn = {};
