/**
 * The schedule of an outbox worker (e-mail, back-channel logout): runs `pass` when woken (a
 * commit's announcement) and every `pollIntervalMs` otherwise, never two passes at once; a wake
 * during a pass runs another right after it. A failed pass goes to `onError` and the poll goes on.
 */
export class WakeLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private halted = false;
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly pollIntervalMs: number,
  ) {}

  /** True once `stop` was called (until `start`): a pass in progress should end early. */
  get stopped(): boolean {
    return this.halted;
  }

  /**
   * Runs a pass now, then polls; with `subscribe`, also a pass each time it calls back (a commit's
   * announcement), until `stop`.
   */
  async start(subscribe?: (wake: () => void) => Promise<() => Promise<void>>): Promise<void> {
    if (subscribe) this.unsubscribe = await subscribe(() => this.wake());
    this.halted = false;
    this.wake();
  }

  /** Runs a pass now (after the one in progress, when there is one). */
  wake(): void {
    if (this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass()
      .then(() => undefined)
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else if (!this.halted) {
          this.timer = setTimeout(() => this.wake(), this.pollIntervalMs);
          this.timer.unref();
        }
      });
  }

  /** Stops listening and polling, and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.halted = true;
    clearTimeout(this.timer);
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
    await this.running;
  }
}

/** Exponential backoff: the delay after the `attempts`-th failure, doubling from `baseBackoffMs` up to `maxBackoffMs`. */
export function backoffMs(
  attempts: number,
  options: { baseBackoffMs: number; maxBackoffMs: number },
): number {
  return Math.min(options.baseBackoffMs * 2 ** Math.max(0, attempts - 1), options.maxBackoffMs);
}
