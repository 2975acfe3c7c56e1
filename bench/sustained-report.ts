/**
 * The sustained charges (bench/sustained.ts) in the results: their figures, their targets, and
 * their section of bench/results.md. Apart from the run, so that `npm run bench:report` needs no
 * database.
 */
import type { LedgerCheck } from '../src/modules/wallet/wallet.service.js';
import { median } from './harness.js';

/** One interval of the sustained charges. */
export interface SustainedInterval {
  /** Seconds since the start of the run at the interval's end. */
  atSeconds: number;
  chargesPerSecond: number;
  p99Ms: number;
  /** Non-2xx answers and errors. */
  failed: number;
  serviceCpuMicrosPerCharge: number | null;
  postgresCpuMicrosPerCharge: number | null;
  /** Cluster-wide (bench/wal.ts). */
  walBytesPerCharge: number | null;
  /** Rows of wallet_transactions at the interval's end. */
  ledgerEntries: number;
}

export interface SustainedResults {
  users: number;
  connections: number;
  seconds: number;
  intervalSeconds: number;
  /** Entries written in bulk before the run, and the ledger's size before and after it. */
  prefilled: number;
  ledgerEntriesBefore: number;
  ledgerEntriesAfter: number;
  intervals: SustainedInterval[];
  ledgerCheck: LedgerCheck | null;
}

/** The ledger size the run must take the ledger past. */
export const SUSTAINED_LEDGER_TARGET = 1_000_000;

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** Charges per second over the whole run (every interval's charges over every interval's time). */
export function overallRate(sustained: SustainedResults): number {
  const seconds = sustained.intervals.length * sustained.intervalSeconds;
  const charges = sum(sustained.intervals.map((each) => each.chargesPerSecond * sustained.intervalSeconds));
  return seconds > 0 ? charges / seconds : 0;
}

/** The median over intervals of one figure, null where no interval has it. */
export function intervalMedian(
  sustained: SustainedResults,
  figure: (interval: SustainedInterval) => number | null,
): number | null {
  const values = sustained.intervals.map(figure).filter((value): value is number => value !== null);
  return values.length > 0 ? Math.round(median(values)) : null;
}

const bothCpus = (interval: SustainedInterval) =>
  interval.serviceCpuMicrosPerCharge === null || interval.postgresCpuMicrosPerCharge === null
    ? null
    : interval.serviceCpuMicrosPerCharge + interval.postgresCpuMicrosPerCharge;

export interface SustainedVerdict {
  target: string;
  measured: string;
  pass: boolean;
}

/** The targets of the sustained charges. */
export function judgeSustained(sustained: SustainedResults | undefined): SustainedVerdict[] {
  if (!sustained || sustained.intervals.length === 0) return [];
  const first = sustained.intervals[0] as SustainedInterval;
  const last = sustained.intervals.at(-1) as SustainedInterval;
  const rate = overallRate(sustained);
  const failed = sum(sustained.intervals.map((each) => each.failed));
  const drift = first.chargesPerSecond > 0 ? last.chargesPerSecond / first.chargesPerSecond - 1 : Number.NaN;
  const cpu = intervalMedian(sustained, bothCpus);
  const verdicts: SustainedVerdict[] = [
    {
      target: `sustained charges ≥ 1,500/s over ${sustained.seconds} s`,
      measured: `${Math.round(rate)}/s, ${failed} failed`,
      pass: rate >= 1500 && failed === 0,
    },
    {
      // The cost must not grow with the ledger: a last interval faster than the first is the
      // machine's own drift (the service's CPU per charge moves with it), not a miss.
      target: "sustained charges: the last interval's rate at most 10% below the first's",
      measured: `${Math.round(last.chargesPerSecond)}/s against ${Math.round(first.chargesPerSecond)}/s: ${drift >= 0 ? '+' : ''}${(drift * 100).toFixed(1)}%`,
      pass: drift >= -0.1,
    },
    {
      target: 'sustained charges: service + PostgreSQL CPU ≤ 1,000 µs per charge',
      measured:
        cpu === null
          ? 'not measured'
          : `${cpu} µs (median of intervals: service ${intervalMedian(sustained, (each) => each.serviceCpuMicrosPerCharge)} µs, PostgreSQL ${intervalMedian(sustained, (each) => each.postgresCpuMicrosPerCharge)} µs)`,
      pass: cpu !== null && cpu <= 1000,
    },
    {
      target: `sustained charges: ledger past ${SUSTAINED_LEDGER_TARGET.toLocaleString('en')} entries at the end`,
      measured: `${sustained.ledgerEntriesAfter.toLocaleString('en')} entries (${sustained.ledgerEntriesBefore.toLocaleString('en')} before the run, ${sustained.prefilled.toLocaleString('en')} of them written in bulk)`,
      pass: sustained.ledgerEntriesAfter > SUSTAINED_LEDGER_TARGET,
    },
  ];
  if (sustained.ledgerCheck) {
    verdicts.push({
      target: 'sustained charges: ledger check after the run',
      measured: `${sustained.ledgerCheck.wallets_checked} wallets, ${sustained.ledgerCheck.mismatches.length} mismatches`,
      pass: sustained.ledgerCheck.ok,
    });
  }
  return verdicts;
}

/** Where the time of a charge goes in the sustained run, for a missed target. */
export function sustainedCosts(sustained: SustainedResults) {
  return {
    label: `sustained charges (median of ${sustained.intervals.length} intervals)`,
    serviceCpu: intervalMedian(sustained, (each) => each.serviceCpuMicrosPerCharge),
    postgresCpu: intervalMedian(sustained, (each) => each.postgresCpuMicrosPerCharge),
    walBytes: intervalMedian(sustained, (each) => each.walBytesPerCharge),
  };
}

const dash = (value: number | null) => (value === null ? '–' : String(value));

/** The "Sustained charges" section of bench/results.md. */
export function sustainedSection(sustained: SustainedResults | undefined): string[] {
  if (!sustained) return [];
  return [
    '## Sustained charges',
    '',
    `Charges of 0.01 coin with a fresh idempotency key each, over ${sustained.users.toLocaleString('en')} wallets taken in turn, ${sustained.connections} connections, for ${sustained.seconds} s against the service on PostgreSQL, measured every ${sustained.intervalSeconds} s. Before the run, ${sustained.prefilled.toLocaleString('en')} credit entries were written to the ledger in bulk (in a full run, enough for the run to take it past ${SUSTAINED_LEDGER_TARGET.toLocaleString('en')} entries): ${sustained.ledgerEntriesBefore.toLocaleString('en')} entries before the run, ${sustained.ledgerEntriesAfter.toLocaleString('en')} after. WAL bytes are cluster-wide (every database of the PostgreSQL server and its background processes).`,
    '',
    '| at s | charges/s | p99 ms | failed | service CPU µs/charge | PostgreSQL CPU µs/charge | WAL bytes/charge | ledger entries |',
    '|---|---|---|---|---|---|---|---|',
    ...sustained.intervals.map(
      (each) =>
        `| ${each.atSeconds} | ${Math.round(each.chargesPerSecond)} | ${each.p99Ms} | ${each.failed} | ${dash(each.serviceCpuMicrosPerCharge)} | ${dash(each.postgresCpuMicrosPerCharge)} | ${dash(each.walBytesPerCharge)} | ${each.ledgerEntries.toLocaleString('en')} |`,
    ),
    '',
    sustained.ledgerCheck
      ? `Ledger check after the run: ${sustained.ledgerCheck.ok ? 'pass' : 'FAIL'} (${sustained.ledgerCheck.wallets_checked} wallets, ${sustained.ledgerCheck.mismatches.length} mismatches).`
      : 'Ledger check after the run: not made.',
    '',
  ];
}
