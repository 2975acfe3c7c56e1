import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, type ProcessResult, parseJsonOutput, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp wallet credit U AMOUNT [--description D]` and `idp wallet verify` (issue
 * "The coin wallet"), run in process through the CLI's own parsing and execution (test/helpers/cli-in-process.ts)
 * against a fresh database. Tests run in
 * order and build on each other's data.
 */

const TIMEOUT = 60_000;

let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli();
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

describe('idp wallet credit', () => {
  it('tops up a wallet and prints the balance and the ledger entry', { timeout: TIMEOUT }, async () => {
    succeeded(
      await idp(['users', 'create', '--username', 'Walter', '--password', 'long enough password', '--json']),
    );
    const first = succeeded(await idp(['wallet', 'credit', 'walter', '12.5', '--json']));
    expect(first).toEqual({
      balance: 12.5,
      transaction: {
        id: expect.stringMatching(/^tx_/),
        type: 'credit',
        amount: 12.5,
        currency: 'COIN',
        description: 'Top-up',
        status: 'completed',
        balance_after: 12.5,
        idempotency_key: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    const second = succeeded(
      await idp(['wallet', 'credit', 'Walter', '0.75', '--description', 'Welcome bonus', '--json']),
    );
    expect(second).toMatchObject({
      balance: 13.25,
      transaction: { amount: 0.75, description: 'Welcome bonus', balance_after: 13.25 },
    });
  });

  it('refuses a bad amount with the usage line, and an unknown user', { timeout: TIMEOUT }, async () => {
    for (const amount of ['0', '1.005', '1e3']) {
      const result = await idp(['wallet', 'credit', 'walter', amount, '--json']);
      failed(result, /AMOUNT|amount/);
    }
    failed(
      await idp(['wallet', 'credit', 'walter', '--json']),
      /expected 2 arguments[\s\S]*usage: idp wallet credit/,
    );
    failed(await idp(['wallet', 'credit', 'nobody', '5', '--json']), /no user named nobody/);
    failed(
      await idp(['wallet', 'credit', 'walter', '5', '--description', '', '--json']),
      /description must be 1-255 characters/,
    );
  });
});

describe('idp wallet verify', () => {
  it('passes when every balance matches its ledger', { timeout: TIMEOUT }, async () => {
    expect(succeeded(await idp(['wallet', 'verify', '--json']))).toEqual({
      ok: true,
      wallets_checked: 1,
      mismatches: [],
    });
  });

  it('exits with status 1 and lists a wallet whose balance does not match', {
    timeout: TIMEOUT,
  }, async () => {
    await sql`update wallets set balance = balance + 100`.execute(
      cli?.database.db as NonNullable<typeof cli>['database']['db'],
    );
    const result = await idp(['wallet', 'verify', '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^idp: 1 wallet\(s\) do not match their ledger/);
    expect(parseJsonOutput(result)).toEqual({
      ok: false,
      wallets_checked: 1,
      mismatches: [
        { user_id: expect.any(Number), balance: 14.25, ledger_sum: 13.25, last_balance_after: 13.25 },
      ],
    });
  });
});
