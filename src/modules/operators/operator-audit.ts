import type { AuditAction, AuditEvent } from '../audit/audit.repository.js';
import type { ConsoleRole } from './roles.js';

/** The operator behind a console action, as the audit log records them. */
export interface OperatorActor {
  userId: number;
  username: string;
  role: ConsoleRole;
  ip: string | null;
}

/** The audit actor of a console action: the operator's account, which outlives a renamed username. */
export function operatorActorId(userId: number): string {
  return `operator:${userId}`;
}

/**
 * The audit event of a console action: the operator's account as the actor, their username and role
 * as they were at the time, and the values that changed (`before`, `after`). Never a secret: a
 * caller passes what an auditor may read. Record it in the transaction of the change itself.
 */
export function operatorAuditEvent(
  actor: OperatorActor,
  at: Date,
  event: {
    action: AuditAction;
    subject?: string | null;
    before?: Record<string, unknown>;
    after?: Record<string, unknown>;
    details?: Record<string, unknown>;
  },
): AuditEvent {
  return {
    at,
    actor: operatorActorId(actor.userId),
    action: event.action,
    subject: event.subject ?? null,
    ip: actor.ip,
    details: {
      operator: actor.username,
      role: actor.role,
      ...(event.before ? { before: event.before } : {}),
      ...(event.after ? { after: event.after } : {}),
      ...event.details,
    },
  };
}
