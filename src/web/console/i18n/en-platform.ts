/** The console's platform texts in English. */
export const platformEn = {};
