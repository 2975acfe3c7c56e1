/** The console's dashboard texts in English. */
export const dashboardEn = {};
