import type { z } from 'zod';
import { InvalidRequest } from './errors.js';

/** Parses service input with a zod schema; the first problems become one InvalidRequest. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new InvalidRequest(
    result.error.issues
      .slice(0, 3)
      .map((issue) => issue.message)
      .join('; '),
  );
}

/** PostgreSQL's unique_violation (SQLSTATE 23505), on both drivers. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23505';
}

/** PostgreSQL's check_violation (SQLSTATE 23514): a CHECK constraint refused the row. */
export function isCheckViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23514';
}
