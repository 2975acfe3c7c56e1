import { z } from 'zod';

/** The one currency. */
export const CURRENCY = 'COIN';

/** The largest amount of one charge or credit, in coins. */
export const MAX_AMOUNT = 1_000_000_000;

/** Minor units per coin: amounts have at most 2 decimals and are stored as integers. */
export const MINOR_PER_COIN = 100;

/** A JSON number written with at most two decimals (`String` gives the shortest exact form). */
const TWO_DECIMALS = /^\d+(\.\d{1,2})?$/;

/** Coins (a JSON number) → minor units; undefined when it has more than 2 decimals. */
export function toMinorUnits(amount: number): number | undefined {
  const written = String(amount);
  if (!TWO_DECIMALS.test(written)) return undefined;
  const [whole = '0', fraction = ''] = written.split('.');
  return Number(whole) * MINOR_PER_COIN + Number(fraction.padEnd(2, '0'));
}

/** Minor units → coins, as the JSON number the API returns (1250 → 12.5). */
export function toCoins(minor: number): number {
  return minor / MINOR_PER_COIN;
}

/** Rejects C0/C1 control characters: PostgreSQL text cannot hold NUL, and none belongs in a label. */
const CONTROL_CHARACTERS = /\p{Cc}/u;

/** 1–255 printable ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

export const amountSchema = z
  .number({ message: 'amount must be a JSON number of coins, such as 10 or 2.5' })
  .positive('amount must be greater than 0')
  .max(MAX_AMOUNT, `amount must be at most ${MAX_AMOUNT.toLocaleString('en')}`)
  .refine((amount) => toMinorUnits(amount) !== undefined, 'amount must have at most 2 decimals');

export const descriptionSchema = z
  .string({ message: 'description must be a string' })
  .refine((text) => {
    const length = [...text].length;
    return length >= 1 && length <= 255;
  }, 'description must be 1–255 characters')
  .refine((text) => !CONTROL_CHARACTERS.test(text), 'description must not contain control characters');

/** POST /api/v1/wallet/charge. Unknown fields are ignored; the user comes from the token. */
export const chargeBodySchema = z.object(
  {
    amount: amountSchema,
    currency: z.literal(CURRENCY, { message: `currency must be "${CURRENCY}"` }),
    description: descriptionSchema,
    idempotency_key: z
      .string({ message: 'idempotency_key must be a string' })
      .regex(IDEMPOTENCY_KEY, 'idempotency_key must be 1–255 printable ASCII characters'),
  },
  { error: 'the body must be a JSON object with amount, currency, description and idempotency_key' },
);
export type ChargeBody = z.infer<typeof chargeBodySchema>;

/** GET /api/v1/wallet/transactions. */
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
export const transactionsQuerySchema = z.object({
  limit: z.coerce
    .number({ message: 'limit must be a whole number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .optional()
    .transform((limit) => Math.min(limit ?? DEFAULT_PAGE, MAX_PAGE)),
  cursor: z.string().max(64, 'cursor is not one this API returned').optional(),
});

export const transactionSchema = z.object({
  id: z.string(),
  type: z.enum(['credit', 'charge']),
  amount: z.number(),
  currency: z.literal(CURRENCY),
  description: z.string(),
  status: z.literal('completed'),
  balance_after: z.number(),
  idempotency_key: z.string().nullable(),
  created_at: z.string(),
});
export type TransactionPayload = z.infer<typeof transactionSchema>;

export const balanceResponseSchema = z.object({
  ok: z.literal(true),
  balance: z.number(),
  currency: z.literal(CURRENCY),
});

export const chargeResponseSchema = z.object({
  ok: z.literal(true),
  transaction: transactionSchema,
  balance: z.number(),
});

export const transactionsResponseSchema = z.object({
  ok: z.literal(true),
  transactions: z.array(transactionSchema),
  next_cursor: z.string().nullable(),
});
