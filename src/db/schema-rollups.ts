import type { ColumnType } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The per-minute counters of the console's charts (migrations/0035); part of schema.ts's Database. */

/** One counter's count in one minute, added to by every instance (src/modules/rollups). */
export interface MetricRollupsTable {
  /** The minute's start (whole minutes only). */
  minute: Timestamp;
  name: string;
  /** '' for the total; a client_id or a route class for a series of its own. */
  key: ColumnType<string, string | undefined, string>;
  value: number;
}
