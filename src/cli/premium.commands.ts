import { BILLING_PERIODS, type BillingPeriod, MAX_GRANT_DAYS } from '../modules/premium/premium-grant.js';
import { type Command, type ParsedArgs, required, UsageError } from './command.js';

function grantOf(args: ParsedArgs): { period: BillingPeriod; days: number } {
  const period = required(args, 'period');
  if (!(BILLING_PERIODS as readonly string[]).includes(period)) {
    throw new UsageError(`--period must be month or year, got "${period}"`);
  }
  const daysText = required(args, 'days');
  const days = /^\d{1,5}$/.test(daysText) ? Number(daysText) : Number.NaN;
  if (!(days >= 1 && days <= MAX_GRANT_DAYS)) {
    throw new UsageError(`--days must be a whole number from 1 to ${MAX_GRANT_DAYS}, got "${daysText}"`);
  }
  return { period: period as BillingPeriod, days };
}

/** `idp premium grant`. */
export const premiumCommands: Command[] = [
  {
    name: 'premium grant',
    usage: `idp premium grant U --period month|year --days N (N from 1 to ${MAX_GRANT_DAYS})`,
    summary: "Add N days of premium after the user's current period (or from now); prints the premium status",
    options: { period: { type: 'string' }, days: { type: 'string' } },
    positionals: 1,
    check: (args) => void grantOf(args),
    run: async (ctx, args) =>
      (await import('../modules/premium/premium.service.js')).grantPremium(
        ctx.db,
        { config: ctx.config, clock: ctx.clock },
        { username: args.positionals[0] ?? '', ...grantOf(args) },
      ),
  },
];
