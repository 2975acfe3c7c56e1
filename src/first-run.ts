import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './db/schema.js';
import { hasAnyClient } from './modules/clients/clients.repository.js';

/** Where the plain lines go: the process's stdout, or a stand-in in tests. */
export interface HintOutput {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Whether the database has no client at all, so that a first-run hint is worth printing. */
export async function hasNoClient(db: Kysely<Database>): Promise<boolean> {
  return !(await hasAnyClient(db));
}

/**
 * The next step after a first `npm start`: one info log line (with the command and the discovery
 * URL as fields, and a `msg` a person can read), plus the same as a block of plain lines when
 * stdout is a terminal, where it stands out from the log. Nothing when info lines are off.
 * In production the step is registering a client: `idp demo` is refused there.
 */
export function logFirstRunHint(
  publicUrl: string,
  logger: Logger,
  out: HintOutput = process.stdout,
  production = false,
): void {
  if (!logger.isLevelEnabled('info')) return;
  const discoveryUrl = `${publicUrl}/.well-known/openid-configuration`;
  const nextStep = production ? 'npx idp clients create --help' : 'npx idp demo';
  logger.info(
    { first_run: true, next_step: nextStep, discovery_url: discoveryUrl },
    production
      ? 'no client is registered yet: run "npx idp clients create --help" to register the first site; ' +
          `discovery document: ${discoveryUrl}`
      : 'no client is registered yet: run "npx idp demo" for a demo site and user to sign in with ' +
          `(or "npx idp clients create --help" to register your own); discovery document: ${discoveryUrl}`,
  );
  if (out.isTTY) {
    out.write(
      [
        'No client is registered yet. Next step, in another terminal:',
        production
          ? '  npx idp clients create --help      how to register the first site'
          : '  npx idp demo      a demo site and user to sign in with (or: npx idp clients create --help)',
        `  Discovery document: ${discoveryUrl}`,
        '',
      ].join('\n'),
    );
  }
}
