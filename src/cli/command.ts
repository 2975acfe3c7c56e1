import type { ParseArgsConfig } from 'node:util';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import type { AuditEvent } from '../modules/audit/audit.repository.js';

/** What a command runs against: the same database and services as the server. */
export interface CommandContext {
  db: Kysely<Database>;
  config: Config;
  clock: Clock;
  /** Standard input, read by the caller only when the command asks for it (`--password-stdin`). */
  stdin?: string;
  /**
   * What the files its `--…-file` options name hold, by option name: read by the `idp` process
   * where the operator typed the command (readOptionFiles), as a server a command is handed to has
   * another working directory and may run as another user.
   */
  files?: Readonly<Record<string, string>>;
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export interface Command {
  /** The words that name it: `users create`. */
  name: string;
  /** One line of arguments for the usage text. */
  usage: string;
  summary: string;
  /** Its options; a string option named `…-file` names a file the `idp` process reads (CommandContext.files). */
  options: OptionSpec;
  /** How many positional arguments it takes (after its name). */
  positionals?: number;
  /**
   * Why the command must not run with this configuration (`idp demo` in production), or undefined.
   * Checked before the database is opened, and again by a server that runs a forwarded command.
   */
  refuse?(config: Config): string | undefined;
  /**
   * The checks of its arguments that need no database (throw UsageError): run before the database
   * is opened, so a mistyped command costs no start of the embedded database and no migration.
   */
  check?(args: ParsedArgs): void;
  run(ctx: CommandContext, args: ParsedArgs): Promise<object>;
  /** For commands that change what the audit log records: the event of a successful run. */
  audit?(result: object, args: ParsedArgs): Omit<AuditEvent, 'at' | 'actor' | 'ip'>;
  /**
   * A result that is itself a failure (a check that found problems): the message for stderr. The
   * result is still printed, and the exit status is 1.
   */
  failure?(result: object): string | undefined;
  /** Human-readable output; JSON with `--json`. Default: an indented listing of the result. */
  text?(result: object): string;
}

/** A usage mistake: printed with the command's usage line. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Reads a string option. */
export function str(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads a required string option. */
export function required(args: ParsedArgs, name: string): string {
  const value = str(args, name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

/** Reads an option spelled `true` or `false`. */
export function bool(args: ParsedArgs, name: string): boolean | undefined {
  const value = str(args, name);
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${name} must be true or false`);
}
