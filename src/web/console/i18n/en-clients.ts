/** The console's clients texts in English. */
export const clientsEn = {};
