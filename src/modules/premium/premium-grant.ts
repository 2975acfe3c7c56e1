/** The periods a premium grant is billed by. */
export const BILLING_PERIODS = ['month', 'year'] as const;
export type BillingPeriod = (typeof BILLING_PERIODS)[number];

/** The longest single grant: ten years of days. */
export const MAX_GRANT_DAYS = 3660;
