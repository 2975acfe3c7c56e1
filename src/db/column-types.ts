import type { ColumnType } from 'kysely';

/** A timestamp column: written as a Date, read as a Date on both drivers. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
