import { z } from 'zod';

export const PLATFORM_STATUSES = ['operational', 'degraded', 'maintenance'] as const;
export const INCIDENT_SEVERITIES = ['minor', 'major', 'critical'] as const;
/** A service's own status: the platform statuses, plus `outage` when a live check fails. */
export const SERVICE_STATUSES = [...PLATFORM_STATUSES, 'outage'] as const;

export const incidentSchema = z.object({
  id: z.number().int(),
  title: z.string(),
  message: z.string().nullable(),
  severity: z.enum(INCIDENT_SEVERITIES),
  status: z.enum(['open', 'resolved']),
  started_at: z.string(),
  resolved_at: z.string().nullable(),
});

export const platformStatusSchema = z.object({
  ok: z.literal(true),
  status: z.enum(PLATFORM_STATUSES),
  message: z.string(),
  incidents: z.array(incidentSchema),
  services: z.array(z.object({ name: z.string(), status: z.enum(SERVICE_STATUSES) })),
  updated_at: z.string(),
});

export const healthSchema = z.object({ ok: z.literal(true), status: z.string() });

export const incidentInputSchema = z.object({
  title: z.string().trim().min(1, 'title must not be empty').max(200, 'title must be at most 200 characters'),
  message: z.string().trim().max(2000, 'message must be at most 2000 characters').optional(),
  severity: z
    .enum(INCIDENT_SEVERITIES, { message: 'severity must be minor, major or critical' })
    .default('minor'),
});

export type Incident = z.infer<typeof incidentSchema>;
export type PlatformStatus = z.infer<typeof platformStatusSchema>;
export type IncidentInput = z.input<typeof incidentInputSchema>;
