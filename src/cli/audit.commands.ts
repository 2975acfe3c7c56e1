import { type Command, type ParsedArgs, str, UsageError } from './command.js';

/** Imported when the command runs, not with the command table. */
const auditLog = () => import('../modules/audit/audit-log.service.js');

/** The time forms `--since` takes; the service parses them (kept here so `check` needs no import). */
const SINCE_HINT =
  'an ISO date or time (2026-06-01, 2026-06-01T12:00Z; UTC without a zone) or a duration back from now (30s, 15m, 2h, 7d, 1w)';
const SINCE_FORM =
  /^(?:\d{1,6}[smhdw]|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)$/i;

function limitOf(args: ParsedArgs): number {
  const text = str(args, 'limit') ?? '50';
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 1000))
    throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${text}"`);
  return limit;
}

function checkArgs(args: ParsedArgs): void {
  limitOf(args);
  const since = str(args, 'since');
  if (since !== undefined && !SINCE_FORM.test(since.trim()))
    throw new UsageError(`--since must be ${SINCE_HINT}, got "${since.slice(0, 64)}"`);
  const action = str(args, 'action');
  if (action !== undefined && !/^[a-z][a-z0-9_]{0,63}$/.test(action))
    throw new UsageError(
      `--action must be an action name such as sign_in_failed, got "${action.slice(0, 64)}"`,
    );
  for (const name of ['user', 'client'] as const) {
    if (str(args, name)?.trim() === '') throw new UsageError(`--${name} must not be empty`);
  }
}

/** A reference with its name, as the text output shows it: `alice`, `operator alice`, `Test Site (client:pk_…)`. */
function label(ref: string, name: string | null): string {
  if (name === null) return ref;
  if (ref.startsWith('operator:')) return `operator ${name}`;
  if (ref.startsWith('client:')) return `${name} (${ref})`;
  return name;
}

/** `idp audit tail`. */
export const auditCommands: Command[] = [
  {
    name: 'audit tail',
    usage:
      'idp audit tail [--user USERNAME|ID] [--client CLIENT_ID] [--action NAME] [--since TIME|DURATION] [--limit N] (N from 1 to 1000, default 50)',
    summary:
      'The latest audit events, oldest first: who did what, to what, when and from where, with usernames and client names; filtered by user, client, action and time',
    options: {
      limit: { type: 'string' },
      user: { type: 'string' },
      client: { type: 'string' },
      action: { type: 'string' },
      since: { type: 'string' },
    },
    check: checkArgs,
    run: async (ctx, args) => {
      checkArgs(args);
      const { AuditFilterError, listAuditLog, presentAuditEvent, resolveAuditFilter } = await auditLog();
      let filter: Awaited<ReturnType<typeof resolveAuditFilter>>;
      try {
        filter = await resolveAuditFilter(ctx.db, ctx.clock.now(), {
          user: str(args, 'user'),
          client: str(args, 'client'),
          action: str(args, 'action'),
          since: str(args, 'since'),
        });
      } catch (error) {
        if (error instanceof AuditFilterError) throw new UsageError(error.description);
        throw error;
      }
      const { events } = await listAuditLog(ctx.db, filter, { limit: limitOf(args) });
      // Newest first from the log; printed oldest first, as `tail` prints a log.
      return { events: events.reverse().map(presentAuditEvent) };
    },
    text: (result) =>
      (result as { events: Array<Record<string, unknown>> }).events
        .map((event) =>
          [
            event.at,
            label(event.actor as string, event.actor_name as string | null),
            event.action,
            event.subject == null ? '-' : label(event.subject as string, event.subject_name as string | null),
            event.ip ?? '-',
            JSON.stringify(event.details),
          ].join('  '),
        )
        .join('\n'),
  },
];
