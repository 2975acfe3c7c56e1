import type { PresentedAuditEvent } from './audit-log.service.js';

/**
 * The audit log as CSV (RFC 4180): a header line, then one record per event, CRLF between records.
 * A field with a comma, a double quote, CR or LF is enclosed in double quotes and its quotes are
 * doubled (§2.5–2.7). The log holds what strangers typed (usernames tried at sign-in, client
 * names), and a spreadsheet opening the file runs a cell that starts with = + - @ (or a tab or CR,
 * which some strip first) as a formula (OWASP "CSV Injection"): such a cell starts with a `'`,
 * which makes it text, before it is quoted.
 */

export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'actor',
  'actor_name',
  'action',
  'subject',
  'subject_name',
  'ip',
  'details',
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field: formula-looking text neutralised, then quoted when RFC 4180 needs it. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The events as one CSV document (UTF-8; the caller sends it as text/csv). */
export function auditCsv(events: readonly PresentedAuditEvent[]): string {
  const lines = [AUDIT_CSV_COLUMNS.join(',')];
  for (const event of events) {
    lines.push(
      [
        event.id,
        event.at,
        event.actor,
        event.actor_name,
        event.action,
        event.subject,
        event.subject_name,
        event.ip,
        JSON.stringify(event.details),
      ]
        .map(csvField)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
