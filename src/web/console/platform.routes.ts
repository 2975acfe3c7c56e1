import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { SIGNING_ALGORITHMS } from '../../lib/signing-algorithms.js';
import { operatorAuditEvent } from '../../modules/operators/operator-audit.js';
import { INCIDENT_SEVERITIES } from '../../modules/platform/platform.schemas.js';
import { isBuiltInStatusMessage } from '../../modules/platform/platform.service.js';
import {
  openIncidentAudited,
  platformOverview,
  resolveIncidentAudited,
  retryLogout,
  retryMail,
  rotateKey,
} from '../../modules/platform/platform-operations.service.js';
import { formBody, text } from '../page-forms.js';
import { pageLocale } from '../pages.js';
import { operatorActor } from './console-guard.js';
import { renderConsolePage } from './console-pages.js';
import { consoleTexts } from './i18n/index.js';

const PLATFORM_PATH = '/admin/platform';

const DONE = [
  'mail_retried',
  'logout_retried',
  'key_rotated',
  'incident_opened',
  'incident_resolved',
] as const;
type Done = (typeof DONE)[number];

const pageQuery = z.object({ done: text, kid: text, failed: text });
// The row an action is on is a form field, not a path parameter: a malformed or overlong one is
// then the form's own 404 page, never the router's refusal of the path.
const idForm = formBody({ csrf_token: text, id: text });
const rotateForm = formBody({ csrf_token: text, alg: text });
const incidentForm = formBody({ csrf_token: text, title: text, message: text, severity: text });

interface PageState {
  status?: number;
  done?: Done;
  kid?: string;
  error?: string;
  incident?: { title: string; message: string; severity: string };
  /** Only the failed rows of the outboxes (`?failed=1`). */
  failedOnly?: boolean;
}

/** A time as the platform page shows it: exact, in UTC. */
const utc = (value: Date | string) => `${new Date(value).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The console's platform page: status and incidents, the mail outbox and back-channel logouts
 * (retry), the signing keys (rotate). Each action is one transaction with its audit event, then a
 * 303 back to the page with `?done=`.
 */
export const consolePlatformRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const { db, ctx } = deps;
  const routes = app.withTypeProvider<ZodTypeProvider>();

  const render = async (request: FastifyRequest, reply: FastifyReply, state: PageState) => {
    const c = consoleTexts(pageLocale(request, reply));
    const overview = await platformOverview(db, ctx, { failedOnly: state.failedOnly ?? false });
    return renderConsolePage(
      reply,
      deps,
      'console/platform',
      {
        title: c.platform.title,
        area: 'platform',
        overview,
        // The service's own status sentences are said in the page's language; an operator's as written.
        builtInMessage: isBuiltInStatusMessage(overview.status.message),
        algorithms: SIGNING_ALGORITHMS,
        utc,
        done: state.done ?? null,
        kid: state.kid ?? null,
        error: state.error ?? null,
        incident: state.incident ?? { title: '', message: '', severity: 'minor' },
        failedOnly: state.failedOnly ?? false,
      },
      { status: state.status, switchBase: PLATFORM_PATH },
    );
  };
  /** Back to the page with its status message. */
  const doneTo = (reply: FastifyReply, done: Done, extra: Record<string, string> = {}) =>
    reply.redirect(`${PLATFORM_PATH}?${new URLSearchParams({ done, ...extra })}`, 303);
  const post = {
    auth: 'browser' as const,
    csrf: true as const,
    rateLimit: 'signin' as const,
    switchBase: () => PLATFORM_PATH,
  };

  routes.get(
    PLATFORM_PATH,
    {
      config: {
        auth: 'browser',
        description: 'Platform status and incidents, the outboxes and the signing keys (HTML)',
        console: { can: 'view' },
      },
      schema: { querystring: pageQuery },
    },
    async (request, reply) => {
      const done = DONE.find((each) => each === request.query.done);
      const kid = /^[A-Za-z0-9_-]{1,100}$/.test(request.query.kid ?? '') ? request.query.kid : undefined;
      return render(request, reply, { done, kid, failedOnly: request.query.failed === '1' });
    },
  );

  routes.post(
    `${PLATFORM_PATH}/mail/retry`,
    {
      config: { ...post, description: 'Queue a failed e-mail again (form POST)', console: { can: 'mail' } },
      schema: { body: idForm },
    },
    async (request, reply) => {
      const actor = operatorActor(request);
      try {
        await retryMail(db, ctx, (request.body.id ?? '').slice(0, 20), (mail) =>
          operatorAuditEvent(actor, ctx.clock.now(), {
            action: 'mail_retried',
            subject: `mail:${mail.id}`,
            details: { kind: mail.kind, recipient: mail.recipient },
          }),
        );
      } catch (error) {
        if (!(error instanceof NotFound || error instanceof InvalidRequest)) throw error;
        return render(request, reply, { status: 404, error: 'not_failed' });
      }
      return doneTo(reply, 'mail_retried');
    },
  );

  routes.post(
    `${PLATFORM_PATH}/logouts/retry`,
    {
      config: {
        ...post,
        description: 'Queue a failed back-channel logout again (form POST)',
        console: { can: 'mail' },
      },
      schema: { body: idForm },
    },
    async (request, reply) => {
      const actor = operatorActor(request);
      try {
        await retryLogout(db, ctx, (request.body.id ?? '').slice(0, 20), (logout) =>
          operatorAuditEvent(actor, ctx.clock.now(), {
            action: 'backchannel_logout_retried',
            subject: `client:${logout.clientId}`,
            details: { logout_id: logout.id, user: `user:${logout.userId}` },
          }),
        );
      } catch (error) {
        if (!(error instanceof NotFound || error instanceof InvalidRequest)) throw error;
        return render(request, reply, { status: 404, error: 'not_failed' });
      }
      return doneTo(reply, 'logout_retried');
    },
  );

  routes.post(
    `${PLATFORM_PATH}/keys/rotate`,
    {
      config: {
        ...post,
        description: 'Add a new id_token signing key of an algorithm, as idp keys rotate (form POST)',
        console: { can: 'keys', destructive: true },
      },
      schema: { body: rotateForm },
    },
    async (request, reply) => {
      const actor = operatorActor(request);
      let kid: string;
      try {
        ({ kid } = await rotateKey(db, ctx, request.body.alg ?? '', (key) =>
          operatorAuditEvent(actor, ctx.clock.now(), {
            action: 'key_rotated',
            subject: `key:${key.kid}`,
            details: { algorithm: key.algorithm },
          }),
        ));
      } catch (error) {
        if (!(error instanceof InvalidRequest)) throw error;
        return render(request, reply, { status: 400, error: 'algorithm' });
      }
      return doneTo(reply, 'key_rotated', { kid });
    },
  );

  routes.post(
    `${PLATFORM_PATH}/incidents`,
    {
      config: {
        ...post,
        description: 'Open an incident, shown by the platform status (form POST)',
        console: { can: 'platform', destructive: true },
      },
      schema: { body: incidentForm },
    },
    async (request, reply) => {
      const actor = operatorActor(request);
      const input = {
        title: (request.body.title ?? '').slice(0, 300),
        message: (request.body.message ?? '').slice(0, 2100),
        severity: request.body.severity ?? 'minor',
      };
      const problem =
        input.title.trim() === '' || input.title.trim().length > 200
          ? 'incident_title'
          : input.message.trim().length > 2000
            ? 'incident_message'
            : (INCIDENT_SEVERITIES as readonly string[]).includes(input.severity)
              ? undefined
              : 'incident_severity';
      if (problem) return render(request, reply, { status: 400, error: problem, incident: input });
      try {
        await openIncidentAudited(
          db,
          ctx,
          { ...input, severity: input.severity as (typeof INCIDENT_SEVERITIES)[number] },
          (incident) =>
            operatorAuditEvent(actor, ctx.clock.now(), {
              action: 'incident_opened',
              subject: `incident:${incident.id}`,
              after: { title: incident.title, severity: incident.severity, message: incident.message },
            }),
        );
      } catch (error) {
        if (!(error instanceof InvalidRequest)) throw error;
        return render(request, reply, { status: 400, error: 'incident_title', incident: input });
      }
      return doneTo(reply, 'incident_opened');
    },
  );

  routes.post(
    `${PLATFORM_PATH}/incidents/resolve`,
    {
      config: {
        ...post,
        description: 'Resolve an open incident (form POST)',
        console: { can: 'platform', destructive: true },
      },
      schema: { body: idForm },
    },
    async (request, reply) => {
      const actor = operatorActor(request);
      try {
        await resolveIncidentAudited(db, ctx, (request.body.id ?? '').slice(0, 20), (incident) =>
          operatorAuditEvent(actor, ctx.clock.now(), {
            action: 'incident_resolved',
            subject: `incident:${incident.id}`,
            before: { status: 'open' },
            after: { status: incident.status },
            details: { title: incident.title },
          }),
        );
      } catch (error) {
        if (!(error instanceof NotFound || error instanceof InvalidRequest)) throw error;
        return render(request, reply, { status: 404, error: 'no_incident' });
      }
      return doneTo(reply, 'incident_resolved');
    },
  );
};
