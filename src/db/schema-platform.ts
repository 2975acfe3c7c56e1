import type { Generated } from 'kysely';
import type { DefaultedTimestamp, Timestamp } from './column-types.js';

/* The platform status and its incidents (GET /api/v1/platform/status). */

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
