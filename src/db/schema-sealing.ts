import type { ColumnType } from 'kysely';
import type { Timestamp } from './column-types.js';

/* The running service's sealing key, as a value only it can open (migrations/0043). */

export interface SealingKeyCheckTable {
  id: ColumnType<number, number | undefined, never>;
  sealed: string;
  updated_at: Timestamp;
}
