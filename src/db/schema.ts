import type { ColumnType, Generated } from 'kysely';

/** A timestamp column: written as a Date, read as a Date on both drivers. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<number>;
  /** As the user chose it, NFKC-normalized; unique on lower(username). */
  username: string;
  password_hash: string;
  email: string | null;
  email_verified: Generated<boolean>;
  display_name: string | null;
  verification_level: Generated<number>;
  disabled_at: Timestamp | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface ClientsTable {
  id: Generated<number>;
  client_id: string;
  /** SHA-256 (base64url) of the client secret; the secret itself is never stored. */
  secret_hash: string;
  name: string;
  site_url: string;
  redirect_uris: string[];
  wallet: Generated<boolean>;
  official_mobile: Generated<boolean>;
  disabled_at: Timestamp | null;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export type PlatformStatusValue = 'operational' | 'degraded' | 'maintenance';

export interface PlatformStateTable {
  id: number;
  status: PlatformStatusValue;
  message: string | null;
  updated_at: DefaultedTimestamp;
}

export type IncidentSeverity = 'minor' | 'major' | 'critical';

export interface IncidentsTable {
  id: Generated<number>;
  title: string;
  message: string | null;
  severity: IncidentSeverity;
  status: 'open' | 'resolved';
  started_at: Timestamp;
  resolved_at: Timestamp | null;
}

export interface Database {
  users: UsersTable;
  clients: ClientsTable;
  platform_state: PlatformStateTable;
  incidents: IncidentsTable;
}
