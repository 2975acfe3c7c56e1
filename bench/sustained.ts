/**
 * Sustained charges: charges of 0.01 coin spread over thousands of wallets for minutes on end
 * (BENCH_SUSTAINED_SECONDS), against the service on PostgreSQL, with a ledger that the run takes
 * past a million entries. One autocannon run per interval (BENCH_SUSTAINED_INTERVAL_SECONDS), each
 * measured on its own: does the rate hold as the ledger, its indexes and the WAL grow?
 */
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { verifyLedger } from '../src/modules/wallet/wallet.service.js';
import { cpuMicros, load, postgresCpuMicros } from './harness.js';
import { spreadCharges } from './scenarios.js';
import type { SeededClient } from './seed.js';
import { settle } from './service.js';
import {
  SUSTAINED_LEDGER_TARGET,
  type SustainedInterval,
  type SustainedResults,
} from './sustained-report.js';
import type { WalProbe } from './wal.js';
import { ledgerEntries, prefillLedger, seedWalletUsers } from './wallet-users.js';

export interface SustainedOptions {
  db: Kysely<Database>;
  /** The client with the wallet right whose tokens charge. */
  shop: SeededClient;
  /** The service's base URL and process. */
  base: string;
  pid: number | undefined;
  wal?: WalProbe | undefined;
  users: number;
  seconds: number;
  intervalSeconds: number;
  connections: number;
  /**
   * Entries to write in bulk before the run; by default a million less the entries already there
   * and 80% of those the run is expected to add at `expectedRate` charges per second.
   */
  prefill?: number | undefined;
  expectedRate: number;
  /** Called after each interval (the resident memory sample). */
  onInterval?: () => void;
}

export async function measureSustained(options: SustainedOptions): Promise<SustainedResults> {
  const { db, seconds, intervalSeconds } = options;
  console.log(`seeding ${options.users} wallet users…`);
  const { userIds, tokens } = await seedWalletUsers(db, options.shop, options.users);
  const expected = Math.round(0.8 * options.expectedRate * seconds);
  const toWrite =
    options.prefill ?? Math.max(0, SUSTAINED_LEDGER_TARGET - (await ledgerEntries(db)) - expected);
  console.log(`writing ${toWrite} ledger entries in bulk…`);
  const prefilled = await prefillLedger(db, userIds, toWrite);
  await settle(db);
  const ledgerEntriesBefore = await ledgerEntries(db);
  const url = `${options.base}/api/v1/wallet/charge`;
  const requests = { ...spreadCharges(tokens), connections: options.connections };
  const intervals: SustainedInterval[] = [];
  const count = Math.max(1, Math.round(seconds / intervalSeconds));
  for (let i = 0; i < count; i++) {
    const walBefore = (await options.wal?.()) ?? null;
    const cpuBefore = cpuMicros(options.pid);
    const postgresBefore = postgresCpuMicros();
    const result = await load(url, requests, intervalSeconds);
    const cpuAfter = cpuMicros(options.pid);
    const postgresAfter = postgresCpuMicros();
    const walAfter = (await options.wal?.()) ?? null;
    const charged = result['2xx'];
    const per = (from: number | undefined, to: number | undefined) =>
      from !== undefined && to !== undefined && charged > 0 ? Math.round((to - from) / charged) : null;
    const interval: SustainedInterval = {
      atSeconds: (i + 1) * intervalSeconds,
      chargesPerSecond: Math.round((charged / (result.duration || intervalSeconds)) * 10) / 10,
      p99Ms: result.latency.p99,
      failed: result.non2xx + result.errors,
      serviceCpuMicrosPerCharge: per(cpuBefore, cpuAfter),
      postgresCpuMicrosPerCharge: per(postgresBefore, postgresAfter),
      walBytesPerCharge: walBefore && walAfter ? per(walBefore.bytes, walAfter.bytes) : null,
      ledgerEntries: await ledgerEntries(db),
    };
    intervals.push(interval);
    options.onInterval?.();
    console.log(JSON.stringify({ sustained: interval }));
  }
  const ledgerCheck = await verifyLedger(db);
  console.log(`ledger check after the sustained charges: ${JSON.stringify(ledgerCheck)}`);
  return {
    users: userIds.length,
    connections: options.connections,
    seconds: count * intervalSeconds,
    intervalSeconds,
    prefilled,
    ledgerEntriesBefore,
    ledgerEntriesAfter: intervals.at(-1)?.ledgerEntries ?? ledgerEntriesBefore,
    intervals,
    ledgerCheck,
  };
}
