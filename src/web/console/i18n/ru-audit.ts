import type { auditEn } from './en-audit.js';

/** The console's audit texts in Russian. */
export const auditRu: typeof auditEn = {};
