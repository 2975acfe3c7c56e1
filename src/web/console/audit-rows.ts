import type { AuditFilterInput, NamedAuditEvent } from '../../modules/audit/audit-log.service.js';

/** A reference of an event as the audit page shows it: a name when it has one, and a filter link. */
export interface AuditParty {
  /** As recorded: `user:1`, `operator:2`, `client:pk_…`, `key:…`, `anonymous`. */
  ref: string;
  name: string | null;
  operator: boolean;
  /** The audit page filtered by this party, when it is an account or a client. */
  filterHref: string | null;
}

/** One row of the audit page's table. */
export interface AuditRow {
  id: number;
  at: string;
  atText: string;
  actor: AuditParty;
  action: string;
  subject: AuditParty | null;
  ip: string | null;
  details: string;
}

/** The longest details text a row shows (the exports hold them whole). */
const DETAILS_MAX = 300;

function party(ref: string, name: string | null): AuditParty {
  const account = /^(user|operator):(\d{1,15})$/.exec(ref);
  const client = /^client:(.+)$/.exec(ref);
  const operator = account?.[1] === 'operator';
  let filterHref: string | null = null;
  if (account) {
    filterHref = `/admin/audit?${new URLSearchParams({ [operator ? 'operator' : 'user']: name ?? account[2] ?? '' })}`;
  } else if (client) filterHref = `/admin/audit?${new URLSearchParams({ client: client[1] ?? '' })}`;
  return { ref, name, operator, filterHref };
}

/** An event as a row of the audit page. */
export function auditRow(event: NamedAuditEvent): AuditRow {
  const details = Object.keys(event.details).length === 0 ? '' : JSON.stringify(event.details);
  return {
    id: event.id,
    at: event.at.toISOString(),
    // Locale-free and exact: the log is read to the second, in UTC.
    atText: `${event.at.toISOString().slice(0, 19).replace('T', ' ')} UTC`,
    actor: party(event.actor, event.actorName),
    action: event.action,
    subject: event.subject === null ? null : party(event.subject, event.subjectName),
    ip: event.ip,
    details: details.length > DETAILS_MAX ? `${details.slice(0, DETAILS_MAX)}…` : details,
  };
}

/** The filters that are set, in a stable order, for links that keep them. */
export function filterQuery(input: AuditFilterInput): [string, string][] {
  return Object.entries(input).filter((entry): entry is [string, string] => Boolean(entry[1]));
}
