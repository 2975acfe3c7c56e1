/**
 * What the load generator sends: a bearer GET over many distinct tokens, a DPoP-bound GET with a
 * fresh proof each time, a form POST with a value used once, and wallet charges.
 */
import { dpopSigner } from './dpop.js';
import type { LoadOptions, Scenario } from './harness.js';
import type { Seeded } from './seed.js';
import { COOKIE_SECRET } from './service.js';

/** The key the DPoP scenario's tokens are bound to, and its proofs. */
export const dpop = dpopSigner(COOKIE_SECRET);

/**
 * A bearer GET over many distinct tokens, taken in turn by all connections (each token comes back
 * every `tokens.length` requests, as when many users' sites call at once).
 */
export function bearerRequests(tokens: string[]): LoadOptions {
  let index = 0;
  return { next: () => ({ headers: { authorization: `Bearer ${tokens[index++ % tokens.length]}` } }) };
}

/**
 * A DPoP-bound GET (RFC 9449 §7): `Authorization: DPoP <token>` and a fresh proof for this URL and
 * token each time, as a client must send it.
 */
export function dpopRequests(url: string, tokens: string[]): LoadOptions {
  let index = 0;
  return {
    next: () => {
      const token = tokens[index++ % tokens.length] as string;
      return { headers: { authorization: `DPoP ${token}`, dpop: dpop.proof('GET', url, token) } };
    },
  };
}

/** A form POST with a value used once (a code, a refresh token) in each request. */
export function formPosts(basic: string, values: string[], body: (value: string) => string): LoadOptions {
  let index = 0;
  return {
    method: 'POST',
    next: () => {
      if (index === values.length) console.warn(`ran out of single-use values after ${index} requests`);
      return {
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: body(values[index++ % values.length] as string),
      };
    },
  };
}

export const basicOf = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

let chargeIndex = 0;
/** Charges of 0.01 coin, each with a fresh idempotency key, with the token `tokens()` gives. */
export function charges(tokens: () => string): LoadOptions {
  return {
    method: 'POST',
    next: () => ({
      headers: { authorization: `Bearer ${tokens()}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount: 0.01,
        currency: 'COIN',
        description: 'bench charge',
        idempotency_key: `bench-${chargeIndex++}`,
      }),
    }),
  };
}

/** Charges taking the tokens in turn: each wallet comes back every `tokens.length` charges. */
export function spreadCharges(tokens: string[]): LoadOptions {
  let spread = 0;
  return charges(() => tokens[spread++ % tokens.length] as string);
}

export function walletScenarios(
  target: Scenario['target'],
  base: string,
  pid: number | undefined,
  seeded: Seeded,
): Scenario[] {
  return [
    {
      name: `wallet charges over ${seeded.walletTokens.length} users`,
      target,
      url: `${base}/api/v1/wallet/charge`,
      options: spreadCharges(seeded.walletTokens),
      pid,
    },
    {
      name: 'wallet charges on one hot wallet',
      target,
      url: `${base}/api/v1/wallet/charge`,
      options: charges(() => seeded.walletTokens[0] as string),
      pid,
    },
  ];
}

/** Tokens or codes minted by oidc-provider's bench route (bench/oidc-provider-server.mjs). */
export async function mint(
  base: string,
  kind: string,
  count: number,
): Promise<{ values: string[]; code_verifier?: string }> {
  const response = await fetch(`${base}/bench/mint`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind, count }),
  });
  if (!response.ok) throw new Error(`minting ${kind}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { values: string[]; code_verifier?: string };
}
