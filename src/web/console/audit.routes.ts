import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { auditCsv } from '../../modules/audit/audit-export.js';
import {
  AUDIT_EXPORT_MAX_ROWS,
  type AuditFilter,
  AuditFilterError,
  type AuditFilterInput,
  exportAuditLog,
  listAuditLog,
  presentAuditEvent,
  resolveAuditFilter,
} from '../../modules/audit/audit-log.service.js';
import { operators } from '../../modules/operators/operators.service.js';
import { text } from '../page-forms.js';
import { pageLocale } from '../pages.js';
import { auditRow, filterQuery } from './audit-rows.js';
import { renderConsolePage } from './console-pages.js';
import { consoleTexts } from './i18n/index.js';

/** Events on one page of the log. */
const PAGE_SIZE = 50;

const FILTERS = ['operator', 'user', 'client', 'action', 'since', 'until'] as const;

const filterShape = Object.fromEntries(FILTERS.map((name) => [name, text])) as Record<
  (typeof FILTERS)[number],
  typeof text
>;
const auditQuery = z.object({ ...filterShape, before: text });

/** The filters as the query gave them, trimmed and cut (they are echoed back into the form). */
function filterInput(query: Partial<Record<(typeof FILTERS)[number], string>>): AuditFilterInput {
  return Object.fromEntries(FILTERS.map((name) => [name, (query[name] ?? '').trim().slice(0, 256)]));
}

/** The console's audit log: filtered, named, paged by id, and its exports with the same filters. */
export const consoleAuditRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/admin/audit',
    {
      config: {
        auth: 'browser',
        description: 'The audit log filtered by operator, user, client, action and time, newest first (HTML)',
        console: { can: 'view' },
      },
      schema: { querystring: auditQuery },
    },
    async (request, reply) => {
      const input = filterInput(request.query);
      const c = consoleTexts(pageLocale(request, reply));
      let filter: AuditFilter | undefined;
      let error: AuditFilterError | undefined;
      try {
        filter = await resolveAuditFilter(db, ctx.clock.now(), input);
      } catch (caught) {
        if (!(caught instanceof AuditFilterError)) throw caught;
        error = caught;
      }
      const before = /^\d{1,15}$/.test(request.query.before ?? '') ? Number(request.query.before) : undefined;
      const page = filter
        ? await listAuditLog(db, filter, { beforeId: before, limit: PAGE_SIZE })
        : { events: [], nextBefore: null };
      // The current operators, offered as the operator field's suggestions.
      const operatorNames = (await operators(db)).map((each) => each.username);
      const query = filterQuery(input);
      const withQuery = (path: string, extra: Record<string, string> = {}) => {
        const search = new URLSearchParams({ ...Object.fromEntries(query), ...extra }).toString();
        return search ? `${path}?${search}` : path;
      };
      return renderConsolePage(
        reply,
        deps,
        'console/audit',
        {
          title: c.audit.title,
          area: 'audit',
          input,
          operatorNames,
          error: error ? { field: error.field, reason: error.reason } : null,
          events: page.events.map(auditRow),
          olderHref:
            page.nextBefore === null ? null : withQuery('/admin/audit', { before: String(page.nextBefore) }),
          newestHref: before === undefined ? null : withQuery('/admin/audit'),
          csvHref: withQuery('/admin/audit/export.csv'),
          jsonHref: withQuery('/admin/audit/export.json'),
          exportMax: AUDIT_EXPORT_MAX_ROWS.toLocaleString(pageLocale(request) === 'ru' ? 'ru-RU' : 'en-US'),
        },
        { status: error ? 400 : undefined },
      );
    },
  );

  /** The filtered log for an export, as a download named after the moment it was taken. */
  const exported = async (query: Partial<Record<(typeof FILTERS)[number], string>>) => {
    const filter = await resolveAuditFilter(db, ctx.clock.now(), filterInput(query));
    const { events, truncated } = await exportAuditLog(db, filter);
    const stamp = ctx.clock.now().toISOString().replace(/[-:]/g, '').slice(0, 15);
    return { events: events.map(presentAuditEvent), truncated, filename: `audit-log-${stamp}Z` };
  };
  const exportQuery = z.object(filterShape);

  routes.get(
    '/admin/audit/export.csv',
    {
      config: {
        auth: 'browser',
        description: `The filtered audit log as CSV (RFC 4180), the ${AUDIT_EXPORT_MAX_ROWS} newest events at most`,
        console: { can: 'view' },
      },
      schema: { querystring: exportQuery },
    },
    async (request, reply) => {
      const { events, truncated, filename } = await exported(request.query);
      return reply
        .header('content-type', 'text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="${filename}.csv"`)
        .header('cache-control', 'no-store')
        .header('x-export-truncated', String(truncated))
        .send(auditCsv(events));
    },
  );

  routes.get(
    '/admin/audit/export.json',
    {
      config: {
        auth: 'browser',
        description: `The filtered audit log as JSON, the ${AUDIT_EXPORT_MAX_ROWS} newest events at most`,
        console: { can: 'view' },
      },
      schema: { querystring: exportQuery },
    },
    async (request, reply) => {
      const { events, truncated, filename } = await exported(request.query);
      const body = {
        exported_at: ctx.clock.now().toISOString(),
        filters: Object.fromEntries(filterQuery(filterInput(request.query))),
        max_events: AUDIT_EXPORT_MAX_ROWS,
        truncated,
        events,
      };
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}.json"`)
        .header('cache-control', 'no-store')
        .header('x-export-truncated', String(truncated))
        .send(JSON.stringify(body));
    },
  );
};
