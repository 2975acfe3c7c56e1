/** The console's users texts in English. */
export const usersEn = {};
