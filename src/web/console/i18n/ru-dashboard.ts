import type { dashboardEn } from './en-dashboard.js';

/** The console's dashboard texts in Russian. */
export const dashboardRu: typeof dashboardEn = {};
