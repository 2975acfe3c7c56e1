import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import type { Database, PlatformStatusValue } from '../../db/schema.js';
import { InvalidRequest, NotFound, Unavailable } from '../../lib/errors.js';
import {
  type IncidentRecord,
  insertIncident,
  listOpenIncidents,
  pingDatabase,
  readPlatformState,
  resolveIncident as resolveStoredIncident,
  writePlatformState,
} from './platform.repository.js';
import {
  type Incident,
  type IncidentInput,
  incidentInputSchema,
  PLATFORM_STATUSES,
  type PlatformStatus,
} from './platform.schemas.js';

/** What the status says when the operator gave no message. */
const DEFAULT_MESSAGES: Record<PlatformStatusValue, string> = {
  operational: 'All systems operational.',
  degraded: 'Some services are degraded.',
  maintenance: 'Maintenance is in progress; the API keeps serving.',
};

/** The database-unreachable status's message (see getPlatformStatus). */
const UNREACHABLE_MESSAGE = 'The database is unreachable; most requests fail until it is back.';

/**
 * Whether a status message is one of the service's own sentences rather than the operator's
 * (`idp status set --message`): a page in another language says the status in its own words instead.
 */
export function isBuiltInStatusMessage(message: string): boolean {
  return message === UNREACHABLE_MESSAGE || Object.values(DEFAULT_MESSAGES).includes(message);
}

export function presentIncident(incident: IncidentRecord): Incident {
  return {
    id: incident.id,
    title: incident.title,
    message: incident.message,
    severity: incident.severity,
    status: incident.status,
    started_at: incident.startedAt.toISOString(),
    resolved_at: incident.resolvedAt ? incident.resolvedAt.toISOString() : null,
  };
}

/**
 * The public platform status. Reading it is the live database check: when the database cannot be
 * reached the status still answers (a status page must work while things are down), saying so.
 */
export async function getPlatformStatus(db: Kysely<Database>, ctx: Context): Promise<PlatformStatus> {
  try {
    const [state, incidents] = await Promise.all([readPlatformState(db), listOpenIncidents(db)]);
    return {
      ok: true,
      status: state.status,
      message: state.message ?? DEFAULT_MESSAGES[state.status],
      incidents: incidents.map(presentIncident),
      services: [
        { name: 'api', status: state.status },
        { name: 'database', status: 'operational' },
      ],
      updated_at: state.updatedAt.toISOString(),
    };
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    return {
      ok: true,
      status: 'degraded',
      message: UNREACHABLE_MESSAGE,
      incidents: [],
      services: [
        { name: 'api', status: 'degraded' },
        { name: 'database', status: 'outage' },
      ],
      updated_at: ctx.clock.now().toISOString(),
    };
  }
}

/** Whether the database answers: the readiness check of load balancers. */
export async function checkDatabase(db: Kysely<Database>): Promise<void> {
  try {
    await pingDatabase(db);
  } catch (error) {
    throw new Unavailable('The database is unreachable.', { cause: error });
  }
}

export async function setPlatformStatus(
  db: Kysely<Database>,
  ctx: Context,
  input: { status: string; message?: string | undefined },
): Promise<PlatformStatus> {
  const { status, message } = input;
  if (!(PLATFORM_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidRequest(`status must be one of ${PLATFORM_STATUSES.join(', ')}`);
  }
  const trimmed = message?.trim();
  if (trimmed && trimmed.length > 2000) throw new InvalidRequest('message must be at most 2000 characters');
  await writePlatformState(db, {
    status: status as PlatformStatusValue,
    message: trimmed || null,
    updatedAt: ctx.clock.now(),
  });
  return getPlatformStatus(db, ctx);
}

export async function openIncident(
  db: Kysely<Database>,
  ctx: Context,
  input: IncidentInput,
): Promise<Incident> {
  const parsed = incidentInputSchema.safeParse(input);
  if (!parsed.success) throw new InvalidRequest(parsed.error.issues.map((issue) => issue.message).join('; '));
  const incident = await insertIncident(db, {
    title: parsed.data.title,
    message: parsed.data.message || null,
    severity: parsed.data.severity,
    startedAt: ctx.clock.now(),
  });
  return presentIncident(incident);
}

export async function resolveIncident(
  db: Kysely<Database>,
  ctx: Context,
  id: string | number,
): Promise<Incident> {
  const numeric = typeof id === 'number' ? id : /^\d{1,15}$/.test(id) ? Number(id) : Number.NaN;
  if (!Number.isSafeInteger(numeric)) throw new InvalidRequest(`incident id must be a number, got "${id}"`);
  const incident = await resolveStoredIncident(db, numeric, ctx.clock.now());
  if (!incident) throw new NotFound(`no incident with id ${numeric}`);
  return presentIncident(incident);
}
