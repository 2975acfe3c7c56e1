import type { platformEn } from './en-platform.js';

/** The console's platform texts in Russian. */
export const platformRu: typeof platformEn = {};
