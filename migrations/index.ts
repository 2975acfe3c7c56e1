import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_oauth.js';
import * as m0003 from './0003_token_events.js';
import * as m0004 from './0004_search_premium.js';
import * as m0005 from './0005_username_prefix_index.js';
import * as m0006 from './0006_wallet.js';
import * as m0007 from './0007_mobile.js';
import * as m0008 from './0008_sign_in_attempts.js';
import * as m0009 from './0009_audit.js';
import * as m0010 from './0010_authorization_request_max_age.js';
import * as m0011 from './0011_username_skeleton.js';
import * as m0012 from './0012_sign_in_attempt_sources.js';
import * as m0013 from './0013_mail_outbox.js';
import * as m0014 from './0014_user_deletion.js';
import * as m0015 from './0015_email_verification.js';
import * as m0016 from './0016_password_resets.js';
import * as m0017 from './0017_email_change.js';
import * as m0018 from './0018_mail_limits.js';
import * as m0019 from './0019_authentication_methods.js';
import * as m0020 from './0020_second_factors.js';
import * as m0021 from './0021_passkeys.js';
import * as m0022 from './0022_signing_algorithms.js';
import * as m0023 from './0023_pushed_authorization_requests.js';
import * as m0024 from './0024_dpop.js';
import * as m0025 from './0025_logout.js';
import * as m0026 from './0026_backchannel_logout.js';
import * as m0027 from './0027_client_logo.js';
import * as m0028 from './0028_ledger_without_foreign_keys.js';
import * as m0029 from './0029_token_rows_without_owner_keys.js';
import * as m0030 from './0030_second_factor_lockout.js';
import * as m0031 from './0031_session_reauthentication.js';
import * as m0032 from './0032_mail_recipient_limits.js';
import * as m0033 from './0033_console.js';
import * as m0034 from './0034_user_search.js';
import * as m0035 from './0035_rollups.js';
import * as m0036 from './0036_client_secret_overlap.js';
import * as m0037 from './0037_display_name_prefix.js';
import * as m0038 from './0038_developer_portal.js';
import * as m0039 from './0039_client_secrets_only.js';
import * as m0040 from './0040_upstream_sign_in.js';
import * as m0041 from './0041_device_grant.js';
import * as m0042 from './0042_device_code_events.js';
import * as m0043 from './0043_sealing_key_check.js';
import * as m0044 from './0044_device_code_failures_index.js';
import * as m0045 from './0045_device_clients_without_redirect_uris.js';

/**
 * Every migration, in order. Listed here rather than read from the folder so that the same list
 * serves the TypeScript sources and the compiled image. A test checks that no file is missing.
 * Landed migrations are never edited: a change is a new file.
 */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_oauth': m0002,
  '0003_token_events': m0003,
  '0004_search_premium': m0004,
  '0005_username_prefix_index': m0005,
  '0006_wallet': m0006,
  '0007_mobile': m0007,
  '0008_sign_in_attempts': m0008,
  '0009_audit': m0009,
  '0010_authorization_request_max_age': m0010,
  '0011_username_skeleton': m0011,
  '0012_sign_in_attempt_sources': m0012,
  '0013_mail_outbox': m0013,
  '0014_user_deletion': m0014,
  '0015_email_verification': m0015,
  '0016_password_resets': m0016,
  '0017_email_change': m0017,
  '0018_mail_limits': m0018,
  '0019_authentication_methods': m0019,
  '0020_second_factors': m0020,
  '0021_passkeys': m0021,
  '0022_signing_algorithms': m0022,
  '0023_pushed_authorization_requests': m0023,
  '0024_dpop': m0024,
  '0025_logout': m0025,
  '0026_backchannel_logout': m0026,
  '0027_client_logo': m0027,
  '0028_ledger_without_foreign_keys': m0028,
  '0029_token_rows_without_owner_keys': m0029,
  '0030_second_factor_lockout': m0030,
  '0031_session_reauthentication': m0031,
  '0032_mail_recipient_limits': m0032,
  '0033_console': m0033,
  '0034_user_search': m0034,
  '0035_rollups': m0035,
  '0036_client_secret_overlap': m0036,
  '0037_display_name_prefix': m0037,
  '0038_developer_portal': m0038,
  '0039_client_secrets_only': m0039,
  '0040_upstream_sign_in': m0040,
  '0041_device_grant': m0041,
  '0042_device_code_events': m0042,
  '0043_sealing_key_check': m0043,
  '0044_device_code_failures_index': m0044,
  '0045_device_clients_without_redirect_uris': m0045,
};
