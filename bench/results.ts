/** The shape of bench/results.json: what a run measured, from which bench/results.md is rendered. */
import type { LedgerCheck } from '../src/modules/wallet/wallet.service.js';
import type { Measurement } from './harness.js';
import type { ScaleResults } from './scale.js';
import type { StartupMeasurement } from './startup.js';
import type { SustainedResults } from './sustained-report.js';

/** A closed-loop scenario (bench/flows.ts): completed flows per second. */
export interface FlowMeasurement {
  scenario: string;
  workers: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  runs: number[];
  firstFailure?: string | undefined;
}

export interface BenchResults {
  measuredAt: string;
  smoke: boolean;
  machine: {
    cores: number;
    node: string;
    pinned: boolean;
    /** RSA-2048 signatures per second on the server's core (`openssl speed`), where openssl exists. */
    rsa2048SignsPerSecond?: number | null;
  };
  settings: {
    seconds: number;
    warmupSeconds: number;
    runs: number;
    connections: number;
    searchConnections: number;
    searchSizes: number[];
  };
  measurements: Measurement[];
  flows: FlowMeasurement[];
  searchPlans: Record<string, string>;
  ledgerChecks: { postgres?: LedgerCheck; pglite?: LedgerCheck };
  /** Resident memory of the service on PostgreSQL (MiB): idle after start, and the highest under load. */
  memory: { idleRssMb: number; peakRssMb: number } | null;
  /** Start-up scenarios (bench/startup.ts), when this run measured them. */
  startup?: StartupMeasurement[];
  /** When they were measured, if in a later run than the rest (`BENCH_ONLY=startup`). */
  startupMeasuredAt?: string;
  /** The machine's 1-minute load average before and after the start-up scenarios. */
  startupLoadAverage?: [number, number];
  /** The sustained charges (bench/sustained.ts), when this run made them. */
  sustained?: SustainedResults;
  /** Search at scale (`BENCH_ONLY=scale`, bench/scale.ts), merged into the last run's results. */
  scale?: ScaleResults;
}
