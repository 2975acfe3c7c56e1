import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Listen } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { backoffMs, WakeLoop } from '../../lib/wake-loop.js';
import {
  claimDueMail,
  MAIL_CHANNEL,
  markMailFailed,
  markMailSent,
  type QueuedMail,
  renewClaim,
} from './outbox.repository.js';
import { describeMailError, type MailLog, MailNotSendable, type MailTransport } from './transport.js';

export interface MailWorkerOptions {
  /** How often the outbox is looked at without being woken. */
  pollIntervalMs: number;
  /** How long a claim keeps other instances away, from the start of each send: longer than any send (the SMTP timeouts). */
  leaseMs: number;
  /** The first retry's delay; each next one doubles, up to `maxBackoffMs`. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Sends started before a message is given up on. */
  maxAttempts: number;
  /** Messages claimed at once. */
  batchSize: number;
  /** How long a sent or given-up message is kept before the housekeeping purge deletes it. */
  keepSentMs: number;
  keepFailedMs: number;
}

/**
 * 30 s, 1, 2, 4, 8, 16, 32 min, then hourly: the 10th failed send, about 3 hours after the first,
 * gives up. A mail server down for a maintenance window loses nothing.
 */
export const DEFAULT_MAIL_WORKER_OPTIONS: MailWorkerOptions = {
  pollIntervalMs: 5_000,
  leaseMs: 5 * 60_000,
  baseBackoffMs: 30_000,
  maxBackoffMs: 60 * 60_000,
  maxAttempts: 10,
  batchSize: 10,
  keepSentMs: 7 * 24 * 3600_000,
  keepFailedMs: 30 * 24 * 3600_000,
};

export { backoffMs };

/**
 * Sends the outbox, one per instance. It claims due messages for a lease, sends
 * each (its lease renewed as its send starts), and records the outcome; a failure is retried with
 * exponential backoff until `maxAttempts`, then kept as failed; a send refused for good
 * (MailNotSendable: MAIL_DISABLED=1) is kept as failed at once. Woken by the database's announcement of a committed message
 * (every instance hears it; the claim decides which sends), and by its poll otherwise.
 *
 * Delivery is at least once: an instance that dies after the SMTP server took a message but before
 * recording it leaves it to be sent again once the lease ends. Nothing else sends a message twice.
 */
export class MailWorker {
  private readonly options: MailWorkerOptions;
  private readonly loop: WakeLoop;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ctx: Context,
    private readonly transport: MailTransport,
    private readonly log: MailLog,
    options: Partial<MailWorkerOptions> = {},
  ) {
    this.options = { ...DEFAULT_MAIL_WORKER_OPTIONS, ...options };
    this.loop = new WakeLoop(
      () => this.drain(),
      (error: unknown) =>
        this.log.warn(
          { err: describeMailError(error, this.ctx.config) },
          'mail: the outbox could not be read',
        ),
      this.options.pollIntervalMs,
    );
  }

  /** Starts polling, and listens for enqueued messages when `listen` is given. */
  start(listen?: Listen): Promise<void> {
    return this.loop.start(
      listen && ((wake) => listen(MAIL_CHANNEL, { onMessage: wake, onState: () => undefined })),
    );
  }

  /** Looks at the outbox now (after the run in progress, when there is one). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops listening and polling, waits for the send in progress, and closes the transport. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.transport.close();
  }

  /** Sends every message due now; resolves to how many were sent. */
  async drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const now = this.ctx.clock.now();
      const batch = await claimDueMail(this.db, {
        now,
        leaseUntil: new Date(now.getTime() + this.options.leaseMs),
        claimId: randomUUID(),
        limit: this.options.batchSize,
      });
      for (const mail of batch) if (await this.sendOne(mail)) sent++;
      // A stopping worker leaves what it has not claimed to the other instances or the next start.
      if (batch.length < this.options.batchSize || this.loop.stopped) return sent;
    }
  }

  private async sendOne(mail: QueuedMail): Promise<boolean> {
    // Never the body, subject or recipient: they may carry a token or personal data.
    const about = { mailId: mail.id, kind: mail.kind, attempt: mail.attempts };
    // The batch is sent one message after the other: behind slow sends, the last ones may outlive
    // the lease they were claimed with, and another instance may have claimed them since. Each send
    // starts with a full lease of its own, or not at all.
    const leaseUntil = new Date(this.ctx.clock.now().getTime() + this.options.leaseMs);
    if (!(await renewClaim(this.db, mail, { leaseUntil }))) {
      this.log.info(about, 'mail: not sent; its claim ended and another instance claimed it');
      return false;
    }
    try {
      await this.transport.send({
        to: mail.recipient,
        locale: mail.locale,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    } catch (error) {
      const now = this.ctx.clock.now();
      const description = describeMailError(error, this.ctx.config);
      const givingUp = error instanceof MailNotSendable || mail.attempts >= this.options.maxAttempts;
      const retryAt = givingUp ? null : new Date(now.getTime() + backoffMs(mail.attempts, this.options));
      await markMailFailed(this.db, mail, {
        now,
        error: description,
        retryAt,
        purgeAfter: new Date(now.getTime() + this.options.keepFailedMs),
      });
      // Turned off on purpose: what the operator asked for, not a failure to look into.
      if (error instanceof MailNotSendable) this.log.info({ ...about, error: description }, 'mail: not sent');
      else if (givingUp) this.log.warn({ ...about, error: description }, 'mail: sending failed; given up');
      else this.log.warn({ ...about, error: description, retryAt }, 'mail: sending failed; will retry');
      return false;
    }
    const now = this.ctx.clock.now();
    const recorded = await markMailSent(this.db, mail, {
      now,
      purgeAfter: new Date(now.getTime() + this.options.keepSentMs),
    });
    if (!recorded) this.log.warn(about, 'mail: sent after its claim had ended (the lease is too short)');
    else this.log.info(about, 'mail: sent');
    return true;
  }
}
