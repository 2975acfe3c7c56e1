import type { Generated } from 'kysely';
import type { Timestamp } from './column-types.js';

/** One device's RFC 8628 request (migrations/0041_device_grant). */
export interface DeviceCodesTable {
  id: Generated<number>;
  device_code_hash: string;
  user_code_hash: string;
  client_pk: number;
  scopes: string[];
  device_label: string | null;
  status: Generated<'pending' | 'allowed' | 'denied'>;
  /** Who allowed or denied it, and how they had signed in (for the id_token). */
  user_id: number | null;
  auth_time: Timestamp | null;
  amr: string[] | null;
  sid: string | null;
  interval_seconds: number;
  last_polled_at: Timestamp | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
  redeemed_at: Timestamp | null;
}
