import { z } from 'zod';
import { BILLING_PERIODS, MAX_GRANT_DAYS } from './premium-grant.js';

export { BILLING_PERIODS, type BillingPeriod, MAX_GRANT_DAYS } from './premium-grant.js';

/** `YYYY-MM-DD HH:MM:SS`, in UTC. */
export const PREMIUM_DATE_FORMAT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

/** The premium status (docs/api.md "Premium"), with nulls for a user never premium. */
export const premiumStatusSchema = z.object({
  ok: z.literal(true),
  active: z.boolean(),
  expires_at: z.string().regex(PREMIUM_DATE_FORMAT).nullable(),
  billing_period: z.enum(BILLING_PERIODS).nullable(),
  days_left: z.number().int().nonnegative(),
  wallet_balance: z.number(),
});

export const grantInputSchema = z.object({
  period: z.enum(BILLING_PERIODS, { message: 'period must be month or year' }),
  days: z
    .number({ message: 'days must be a whole number' })
    .int('days must be a whole number')
    .min(1, `days must be between 1 and ${MAX_GRANT_DAYS}`)
    .max(MAX_GRANT_DAYS, `days must be between 1 and ${MAX_GRANT_DAYS}`),
});

export type PremiumStatus = z.infer<typeof premiumStatusSchema>;
export type GrantInput = z.infer<typeof grantInputSchema>;
