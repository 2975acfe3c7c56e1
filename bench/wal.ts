/**
 * PostgreSQL's write-ahead log, read around a run: how much WAL the requests made. Both readings
 * are cluster-wide: every database of the server, its background processes (autovacuum, the
 * checkpointer) and any other client writing at the same time count too.
 */
import type pg from 'pg';

/** Cumulative WAL counters of the cluster at one moment. */
export interface WalCounters {
  /** pg_stat_wal.wal_records and wal_fpi (full-page images): flushed by each backend lazily. */
  records: number;
  fpi: number;
  /**
   * Bytes of WAL inserted so far (the insert position): exact at the moment it is read. Used for
   * bytes rather than pg_stat_wal.wal_bytes, which a backend reports only when it has been idle or
   * at most once a second, so that a run's last second lands in the next run's figures.
   */
  bytes: number;
}

/** Reads the counters; resolves to null where they cannot be read (PostgreSQL before 14, no rights). */
export type WalProbe = () => Promise<WalCounters | null>;

/** A probe that reads pg_stat_wal through `client` (any database of the cluster). */
export function walProbe(client: pg.Client): WalProbe {
  return async () => {
    try {
      const result = await client.query<{ records: string; fpi: string; bytes: string }>(
        `select wal_records::text as records, wal_fpi::text as fpi,
          pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint::text as bytes
        from pg_stat_wal`,
      );
      const row = result.rows[0];
      return row ? { records: Number(row.records), fpi: Number(row.fpi), bytes: Number(row.bytes) } : null;
    } catch {
      return null;
    }
  };
}

/** WAL per request between two readings; null when either is missing or there were no requests. */
export function walPerRequest(
  before: WalCounters | null,
  after: WalCounters | null,
  requests: number,
): { bytes: number; fpi: number } | null {
  if (!before || !after || requests <= 0) return null;
  return { bytes: (after.bytes - before.bytes) / requests, fpi: (after.fpi - before.fpi) / requests };
}

/** What a WAL column measures, for the explanation of each table that has one. */
export const WAL_NOTE =
  'WAL bytes/request is the write-ahead log PostgreSQL inserted during the run over the requests answered, for the service on PostgreSQL only: it is cluster-wide (every database of the PostgreSQL server, its background processes, and any other client writing at the same time count too).';
