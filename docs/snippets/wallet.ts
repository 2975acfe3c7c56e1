/**
 * A wallet charge that happens once, whatever happens to the connection: every attempt sends the
 * same idempotency key, so a retry after a timeout never charges twice.
 */
export interface ChargeRequest {
  /** The provider's base URL, e.g. https://id.example. */
  issuer: string;
  /** An access token granted the `wallet` scope, of a client with the wallet right. */
  accessToken: string;
  /** Your order id: one key per purchase. */
  orderId: string;
  /** Coins, at most 2 decimals. */
  amount: number;
  description: string;
}

export interface Charge {
  ok: true;
  transaction: { id: string; amount: number; balance_after: number; idempotency_key: string };
  balance: number;
}

/** The service refused the charge: `error` is its code (insufficient_funds, idempotency_conflict, …). */
export class ChargeRefused extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string) {
    super(`charge refused: ${status} ${error}`);
    this.status = status;
    this.error = error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function chargeOnce(request: ChargeRequest, attempts = 5): Promise<Charge> {
  const body = JSON.stringify({
    amount: request.amount,
    currency: 'COIN',
    description: request.description,
    idempotency_key: `order-${request.orderId}`,
  });
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let response: Response;
    try {
      response = await fetch(`${request.issuer}/api/v1/wallet/charge`, {
        method: 'POST',
        headers: { authorization: `Bearer ${request.accessToken}`, 'content-type': 'application/json' },
        body, // the same body, so the same key, on every attempt
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      // A timeout or a dropped connection: the charge may or may not have been made. Ask again.
      await sleep(attempt * 1000);
      continue;
    }
    // 201: charged now. 200 (Idempotent-Replayed: true): an earlier attempt charged it.
    if (response.status === 201 || response.status === 200) return (await response.json()) as Charge;
    if (response.status === 429 || response.status === 503) {
      await sleep(Number(response.headers.get('retry-after') ?? attempt) * 1000);
      continue;
    }
    const refusal = (await response.json().catch(() => ({}))) as { error?: string };
    throw new ChargeRefused(response.status, refusal.error ?? 'unknown');
  }
  throw new Error(`no answer after ${attempts} attempts; retry later with the same order id`);
}

// `node wallet.ts ORDER_ID AMOUNT DESCRIPTION` charges the user of ACCESS_TOKEN at the provider
// IDP_ISSUER once and prints the charge: run it again with the same order, and nothing more is charged.
if (import.meta.main) {
  const [orderId, amount, description] = process.argv.slice(2);
  const { IDP_ISSUER = 'http://localhost:3000', ACCESS_TOKEN } = process.env;
  if (!orderId || !amount || !description || !ACCESS_TOKEN) {
    console.error('Usage: ACCESS_TOKEN=at_… node wallet.ts ORDER_ID AMOUNT DESCRIPTION');
    process.exit(1);
  }
  try {
    const charge = await chargeOnce({
      issuer: IDP_ISSUER,
      accessToken: ACCESS_TOKEN,
      orderId,
      amount: Number(amount),
      description,
    });
    process.stdout.write(`${JSON.stringify(charge, null, 2)}\n`);
  } catch (error) {
    if (!(error instanceof ChargeRefused)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}
