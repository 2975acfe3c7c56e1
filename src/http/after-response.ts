import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Work a route starts once its response is sent (see `AfterResponse`). */
    afterResponse: AfterResponse;
  }
}

/**
 * Work a route starts after its response has been sent, so that the response cannot depend on it,
 * not even in its timing (`/password/forgot`, docs/pages.md: the same answer and time whether an
 * account matches or not). Only for work whose loss is harmless: what must survive an instance's
 * death is committed before the answer, or goes through the outbox (the reset link and its message
 * are committed together, by the task). A failure is logged by name and code only, since an error
 * of the database can quote the row it refused. The app's close waits for the tasks in flight.
 */
export class AfterResponse {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly log: FastifyBaseLogger) {}

  /**
   * Starts `task` on a later turn of the event loop, after whatever the sent answer still runs
   * (on PGlite a query holds the thread for its whole run); its failure is logged as `what`, never
   * thrown.
   */
  run(what: string, task: () => Promise<unknown>): void {
    const promise: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(task)
      .then(
        () => undefined,
        (error: unknown) => {
          const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
          this.log.error({ task: what, error: { name, code } }, `${what} failed after the response`);
        },
      )
      .finally(() => this.pending.delete(promise));
    this.pending.add(promise);
  }

  /** Resolves once no task is running (the app's close, and tests). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

export function installAfterResponse(app: FastifyInstance): void {
  const tasks = new AfterResponse(app.log);
  app.decorate('afterResponse', tasks);
  app.addHook('onClose', () => tasks.idle());
}
