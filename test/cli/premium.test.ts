import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, type ProcessResult, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/*
 * `idp premium grant U --period month|year --days N`, run in process through
 * the CLI's own parsing and execution (test/helpers/cli-in-process.ts) against a fresh database. The CLI runs on the system clock. Tests run in order and build on each other's data.
 */

const TIMEOUT = 60_000;
const DAY = 24 * 3600 * 1000;

let cli: InProcessCli | undefined;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
});

afterAll(async () => {
  await cli?.database.drop();
});

function idp(args: readonly string[]): Promise<ProcessResult> {
  if (!cli) throw new Error('no CLI');
  return cli.idp(args);
}

/** The `YYYY-MM-DD HH:MM:SS` UTC string as a time. */
const parseUtc = (value: unknown) => new Date(`${String(value).replace(' ', 'T')}Z`).getTime();

describe('idp premium grant', () => {
  it('grants a period and prints the premium status; a second grant adds to the end', {
    timeout: TIMEOUT,
  }, async () => {
    succeeded(
      await idp(['users', 'create', '--username', 'Penny', '--password', 'long enough password', '--json']),
    );
    const before = Date.now();
    const first = succeeded(
      await idp(['premium', 'grant', 'penny', '--period', 'month', '--days', '30', '--json']),
    );
    expect(first).toEqual({
      ok: true,
      active: true,
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      billing_period: 'month',
      days_left: 30,
      wallet_balance: 0,
    });
    const end = parseUtc(first.expires_at);
    expect(end).toBeGreaterThanOrEqual(before + 30 * DAY - 1000);
    expect(end).toBeLessThanOrEqual(Date.now() + 30 * DAY);

    const second = succeeded(
      await idp(['premium', 'grant', 'Penny', '--period', 'year', '--days', '365', '--json']),
    );
    expect(second).toMatchObject({ active: true, billing_period: 'year', days_left: 395 });
    expect(parseUtc(second.expires_at)).toBe(end + 365 * DAY);
  });

  it('prints the status as a listing without --json', { timeout: TIMEOUT }, async () => {
    const result = await idp(['premium', 'grant', 'penny', '--period', 'month', '--days', '1']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/days_left/);
  });

  it('refuses a bad period or days with the usage line, and an unknown user', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp(['premium', 'grant', 'penny', '--period', 'week', '--days', '7', '--json']),
      /--period must be month or year[\s\S]*usage: idp premium grant U --period month\|year --days N/,
    );
    for (const days of ['0', '3661', '1.5', 'ten']) {
      failed(
        await idp(['premium', 'grant', 'penny', '--period', 'month', '--days', days, '--json']),
        /--days must be a whole number from 1 to 3660[\s\S]*usage: idp premium grant/,
      );
    }
    failed(
      await idp(['premium', 'grant', 'penny', '--days', '7', '--json']),
      /--period is required[\s\S]*usage:/,
    );
    failed(
      await idp(['premium', 'grant', 'nobody', '--period', 'month', '--days', '7', '--json']),
      /no user named nobody/,
    );
  });
});
