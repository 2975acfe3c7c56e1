/** The console's audit texts in English. */
export const auditEn = {};
