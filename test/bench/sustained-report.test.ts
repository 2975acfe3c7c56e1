import { describe, expect, it } from 'vitest';
import {
  judgeSustained,
  type SustainedInterval,
  type SustainedResults,
} from '../../bench/sustained-report.js';

/* The sustained charges' verdicts (bench/sustained-report.ts): the rate must not fall as the ledger grows. */

function interval(atSeconds: number, chargesPerSecond: number, ledgerEntries: number): SustainedInterval {
  return {
    atSeconds,
    chargesPerSecond,
    p99Ms: 40,
    failed: 0,
    serviceCpuMicrosPerCharge: 300,
    postgresCpuMicrosPerCharge: 450,
    walBytesPerCharge: 1600,
    ledgerEntries,
  };
}

function run(first: number, last: number): SustainedResults {
  return {
    seconds: 180,
    intervalSeconds: 60,
    users: 3000,
    connections: 32,
    prefilled: 700_000,
    ledgerEntriesBefore: 700_000,
    ledgerEntriesAfter: 1_020_000,
    intervals: [interval(60, first, 800_000), interval(120, 1800, 910_000), interval(180, last, 1_020_000)],
    ledgerCheck: { ok: true, wallets_checked: 3000, mismatches: [] },
  };
}

const drift = (results: SustainedResults) =>
  judgeSustained(results).find((verdict) => verdict.target.includes('at most 10% below'));

describe('judgeSustained', () => {
  it('fails a run whose last interval is more than 10% slower than its first', () => {
    expect(drift(run(1800, 1630))?.pass).toBe(true);
    expect(drift(run(1800, 1600))?.pass).toBe(false);
  });

  it('passes a run that ends faster than it began: the machine drifted, the cost did not grow', () => {
    expect(drift(run(1800, 2350))).toMatchObject({ pass: true, measured: '2350/s against 1800/s: +30.6%' });
  });

  it('judges the overall rate, the CPU per charge, the ledger size and the ledger check', () => {
    expect(judgeSustained(run(1800, 1800)).map((verdict) => verdict.pass)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });
});
