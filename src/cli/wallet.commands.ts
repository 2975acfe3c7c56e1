import type { LedgerCheck } from '../modules/wallet/wallet.service.js';
import { type Command, type ParsedArgs, str, UsageError } from './command.js';

/** AMOUNT of `wallet credit`: digits only ("1e3", "0x10" or " 5" are not amounts an operator means). */
function amountOf(args: ParsedArgs): number {
  const amountText = args.positionals[1] ?? '';
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(amountText))
    throw new UsageError(`AMOUNT must be a number of coins with at most 2 decimals, got "${amountText}"`);
  return Number(amountText);
}

/** Imported when a command runs, not with the command table. */
const wallet = () => import('../modules/wallet/wallet.service.js');

/** `idp wallet credit` and `idp wallet verify`. */
export const walletCommands: Command[] = [
  {
    name: 'wallet credit',
    audit: (result, args) => {
      const { transaction } = result as { transaction: { id: string; amount: number } };
      return {
        action: 'wallet_credited',
        subject: `username:${(args.positionals[0] ?? '').toLowerCase()}`,
        details: { transaction: transaction.id, amount: transaction.amount },
      };
    },
    usage: 'idp wallet credit U AMOUNT [--description D] (AMOUNT in coins, at most 2 decimals)',
    summary: "Top up the user's wallet; prints the new balance and the ledger entry",
    options: { description: { type: 'string' } },
    positionals: 2,
    check: (args) => void amountOf(args),
    run: async (ctx, args) =>
      (await wallet()).credit(
        ctx.db,
        { config: ctx.config, clock: ctx.clock },
        {
          username: args.positionals[0] ?? '',
          amount: amountOf(args),
          description: str(args, 'description'),
        },
      ),
  },
  {
    name: 'wallet verify',
    usage: 'idp wallet verify',
    summary:
      'Check that every balance equals the sum of its ledger entries; exits with status 1 and lists the wallets that do not',
    options: {},
    run: async (ctx) => (await wallet()).verifyLedger(ctx.db),
    failure: (result) => {
      const check = result as LedgerCheck;
      return check.ok ? undefined : `${check.mismatches.length} wallet(s) do not match their ledger`;
    },
  },
];
