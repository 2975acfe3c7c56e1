import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidRequest } from '../../lib/errors.js';
import { open, seal } from '../../lib/sealed-secret.js';
import { findSealingKeyCheck, saveSealingKeyCheck } from './sealing-key.repository.js';

/*
 * Secrets an operator gives a command (a provider's client secret, Apple's key) are sealed by the
 * process that runs it, under its own COOKIE_SECRET. On PostgreSQL that is the CLI, which may run in
 * a shell without the service's secret (the development default): what it sealed would then never
 * open in the service. The service leaves a value sealed under its key at every start; a process
 * about to seal opens it first.
 */

const PURPOSE = 'sealing key check';
const PLAIN = 'idp';

/** At the service's start: the check sealed under its current key, unless it already opens with it. */
export async function recordSealingKey(
  db: Kysely<Database>,
  ctx: Pick<Context, 'config' | 'clock'>,
): Promise<void> {
  const current = await findSealingKeyCheck(db);
  if (current !== undefined && open(current, [ctx.config.COOKIE_SECRET], PURPOSE) === PLAIN) return;
  await saveSealingKeyCheck(db, seal(PLAIN, ctx.config.COOKIE_SECRET, PURPOSE), ctx.clock.now());
}

/**
 * Refuses to seal under a key the service does not hold. A database no service has started on yet
 * has no check, and anything may be sealed.
 * @throws InvalidRequest naming COOKIE_SECRET
 */
export async function assertServiceSealingKey(
  db: Kysely<Database>,
  ctx: Pick<Context, 'config'>,
): Promise<void> {
  const check = await findSealingKeyCheck(db);
  if (check === undefined || open(check, [ctx.config.COOKIE_SECRET], PURPOSE) === PLAIN) return;
  throw new InvalidRequest(
    `COOKIE_SECRET here is not the service's${ctx.config.cookieSecretIsDefault ? ' (it is not set, so the development default is in use)' : ''}: ` +
      "a secret sealed with it could not be opened by the service. Run the command with the service's environment " +
      '(docker compose exec idp idp …, or COOKIE_SECRET set as the service has it).',
  );
}
