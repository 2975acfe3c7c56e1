import { type Command, str, UsageError } from './command.js';

/** `idp audit tail`. */
export const auditCommands: Command[] = [
  {
    name: 'audit tail',
    usage: 'idp audit tail [--limit N] (N from 1 to 1000, default 50)',
    summary: 'The latest audit events, oldest first: who did what, to what, when and from where',
    options: { limit: { type: 'string' } },
    run: async (ctx, args) => {
      const text = str(args, 'limit') ?? '50';
      const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
      if (!(limit >= 1 && limit <= 1000))
        throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${text}"`);
      const { latestAuditEvents } = await import('../modules/audit/audit.repository.js');
      const events = await latestAuditEvents(ctx.db, limit);
      return {
        events: events.map((event) => ({
          id: event.id,
          at: event.at.toISOString(),
          actor: event.actor,
          action: event.action,
          subject: event.subject,
          ip: event.ip,
          details: event.details,
        })),
      };
    },
    text: (result) =>
      (result as { events: Array<Record<string, unknown>> }).events
        .map((event) =>
          [
            event.at,
            event.actor,
            event.action,
            event.subject ?? '-',
            event.ip ?? '-',
            JSON.stringify(event.details),
          ].join('  '),
        )
        .join('\n'),
  },
];
