import type { z } from 'zod';
import { InvalidRequest } from '../../lib/errors.js';
import type { AuditAction, AuditEvent } from '../audit/audit.repository.js';

/**
 * Input to the clients service refused, with the problem of each field: the CLI prints the
 * description as for any InvalidRequest, the console shows each message beside its field.
 */
export class ClientInputError extends InvalidRequest {
  /** The first problem of each field (by the service's input names: `name`, `redirectUris`, …; `form` for the whole). */
  readonly fields: Readonly<Record<string, string>>;

  constructor(fields: Record<string, string>, description?: string) {
    super(description ?? Object.values(fields).slice(0, 3).join('; '));
    this.fields = fields;
  }
}

/** The field of the form that holds an input of the update schema (redirect URIs are added and removed in one list). */
const FIELD_OF_INPUT: Record<string, string> = {
  addRedirectUris: 'redirectUris',
  removeRedirectUris: 'redirectUris',
  addPostLogoutRedirectUris: 'postLogoutRedirectUris',
  removePostLogoutRedirectUris: 'postLogoutRedirectUris',
};

/** One problem of one field as a ClientInputError. */
export function fieldProblem(field: string, message: string): ClientInputError {
  return new ClientInputError({ [field]: message });
}

/**
 * Parses clients service input; problems become one ClientInputError whose description is the
 * first three messages (as `parseInput` words them) and whose fields hold each field's first.
 */
export function parseClientInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? 'form');
    const field = FIELD_OF_INPUT[name] ?? name;
    fields[field] ??= issue.message;
  }
  const description = result.error.issues
    .slice(0, 3)
    .map((issue) => issue.message)
    .join('; ');
  throw new ClientInputError(fields, description);
}

/** What a change of a client records in the audit log: an operator's event, built by the caller. */
export interface ClientChangeRecord {
  action: AuditAction;
  /** `client:<client_id>`. */
  subject: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  details?: Record<string, unknown>;
}

/**
 * Builds the audit event of a change, recorded in the change's own transaction (the console
 * passes `(e) => operatorAuditEvent(actor, at, e)`); without it a change records nothing itself.
 */
export type ClientAudit = (change: ClientChangeRecord) => AuditEvent;
