import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Listen } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { backoffMs, WakeLoop } from '../../lib/wake-loop.js';
import { recordAudit } from '../audit/audit.repository.js';
import { currentSigner } from '../oidc/keys.service.js';
import {
  type DeliveryOptions,
  type DeliveryResult,
  deliverLogoutToken,
  systemResolver,
} from './logout-delivery.js';
import {
  claimDueLogouts,
  LOGOUT_CHANNEL,
  markLogoutDelivered,
  markLogoutFailed,
  type QueuedLogout,
  renewLogoutClaim,
} from './logout-outbox.repository.js';
import { signLogoutToken } from './logout-token.js';

export interface LogoutWorkerOptions extends DeliveryOptions {
  /** How often the outbox is looked at without being woken. */
  pollIntervalMs: number;
  /** How long a claim keeps other instances away, from the start of each delivery: longer than `timeoutMs`. */
  leaseMs: number;
  /** The first retry's delay; each next one doubles, up to `maxBackoffMs`. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Deliveries started before a logout is given up on… */
  maxAttempts: number;
  /** …or how long after it was queued, whichever comes first. */
  maxAgeMs: number;
  /** Logouts claimed, and delivered in parallel, at once. */
  batchSize: number;
  /** How long a delivered or given-up logout is kept before the housekeeping purge deletes it. */
  keepDoneMs: number;
}

/**
 * 30 s, 1, 2, 4, 8, 16, 32 min, then hourly: the 10th failure, about 3 hours after the first,
 * gives up (and so does any failure 12 hours after the session ended, say after an outage).
 */
export const DEFAULT_LOGOUT_WORKER_OPTIONS: LogoutWorkerOptions = {
  pollIntervalMs: 5_000,
  leaseMs: 60_000,
  baseBackoffMs: 30_000,
  maxBackoffMs: 60 * 60_000,
  maxAttempts: 10,
  maxAgeMs: 12 * 3600_000,
  batchSize: 10,
  keepDoneMs: 7 * 24 * 3600_000,
  timeoutMs: 5_000,
  maxResponseBytes: 64 * 1024,
  resolve: systemResolver,
};

/** What became of one delivery: for the metrics, which the process wires (src/main.ts). */
export type LogoutOutcome = 'delivered' | 'retry' | 'given_up' | 'dropped';

export interface LogoutLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * Delivers the back-channel logout outbox, one worker per instance, built as the
 * mail worker: due logouts are claimed with a lease (two instances never deliver one at once),
 * each is signed now and POSTed, and a failure is retried with exponential backoff until
 * `maxAttempts` or `maxAgeMs`, then given up on: logged, audited (`backchannel_logout_failed`)
 * and kept. Woken by the commit's announcement on every instance, and by its poll otherwise.
 * At least once: an instance dying between the site's answer and its record delivers it again.
 */
export class BackchannelLogoutWorker {
  private readonly options: LogoutWorkerOptions;
  private readonly loop: WakeLoop;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ctx: Context,
    private readonly log: LogoutLog,
    options: Partial<LogoutWorkerOptions> = {},
    private readonly report: (outcome: LogoutOutcome) => void = () => undefined,
  ) {
    this.options = { ...DEFAULT_LOGOUT_WORKER_OPTIONS, ...options };
    this.loop = new WakeLoop(
      () => this.drain(),
      (error: unknown) =>
        this.log.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'backchannel logout: the outbox could not be read',
        ),
      this.options.pollIntervalMs,
    );
  }

  /** Starts polling, and listens for queued logouts when `listen` is given. */
  start(listen?: Listen): Promise<void> {
    return this.loop.start(
      listen && ((wake) => listen(LOGOUT_CHANNEL, { onMessage: wake, onState: () => undefined })),
    );
  }

  /** Looks at the outbox now (after the pass in progress, when there is one). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops listening and polling, and waits for the deliveries in progress. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Delivers every logout due now (one pass); resolves to how many were delivered. */
  async drain(): Promise<number> {
    let delivered = 0;
    for (;;) {
      const now = this.ctx.clock.now();
      const batch = await claimDueLogouts(this.db, {
        now,
        leaseUntil: new Date(now.getTime() + this.options.leaseMs),
        claimId: randomUUID(),
        limit: this.options.batchSize,
      });
      const results = await Promise.all(batch.map((logout) => this.deliverOne(logout)));
      delivered += results.filter(Boolean).length;
      if (batch.length < this.options.batchSize || this.loop.stopped) return delivered;
    }
  }

  private async deliverOne(logout: QueuedLogout): Promise<boolean> {
    // Never the token: it is a signed assertion about the user's session.
    const about = {
      logoutId: logout.id,
      client: logout.clientId,
      reason: logout.reason,
      attempt: logout.attempts,
    };
    const leaseUntil = new Date(this.ctx.clock.now().getTime() + this.options.leaseMs);
    if (!(await renewLogoutClaim(this.db, logout, { leaseUntil }))) return false;
    if (logout.uri === null) {
      // The operator removed the URI or disabled the client since: nothing is sent to it any more.
      await this.fail(logout, 'the client has no back-channel logout URI any more, or is disabled', true);
      this.log.info(about, 'backchannel logout: dropped; the client no longer takes them');
      this.report('dropped');
      return false;
    }
    const result = await this.signAndDeliver(logout, logout.uri);
    const now = this.ctx.clock.now();
    if (result.ok) {
      await markLogoutDelivered(this.db, logout, {
        now,
        purgeAfter: new Date(now.getTime() + this.options.keepDoneMs),
      });
      this.log.info({ ...about, status: result.status }, 'backchannel logout: delivered');
      this.report('delivered');
      return true;
    }
    const givingUp =
      logout.attempts >= this.options.maxAttempts ||
      now.getTime() - logout.createdAt.getTime() >= this.options.maxAgeMs;
    const retryAt = await this.fail(logout, result.error, givingUp);
    if (givingUp)
      this.log.warn({ ...about, error: result.error }, 'backchannel logout: delivery failed; given up');
    else
      this.log.warn(
        { ...about, error: result.error, retryAt },
        'backchannel logout: delivery failed; will retry',
      );
    this.report(givingUp ? 'given_up' : 'retry');
    return false;
  }

  /** Signs a new token and POSTs it; any failure (a signing key not loaded, say) counts as one attempt's. */
  private async signAndDeliver(logout: QueuedLogout, uri: string): Promise<DeliveryResult> {
    try {
      // Back-Channel Logout 1.0 §2.4: signed as the client's id_tokens are.
      const signer = await currentSigner(this.db, this.ctx, logout.alg);
      const token = await signLogoutToken(signer, {
        issuer: this.ctx.config.PUBLIC_URL,
        clientId: logout.clientId,
        userId: logout.userId,
        sid: logout.sid,
        now: this.ctx.clock.now(),
      });
      return await deliverLogoutToken(uri, token, this.options);
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Records a failure: due again after the backoff, or given up on (and audited, when the site failed). */
  private async fail(logout: QueuedLogout, error: string, givingUp: boolean): Promise<Date | null> {
    const now = this.ctx.clock.now();
    const retryAt = givingUp ? null : new Date(now.getTime() + backoffMs(logout.attempts, this.options));
    const record = {
      now,
      error: error.slice(0, 200),
      retryAt,
      purgeAfter: new Date(now.getTime() + this.options.keepDoneMs),
    };
    if (!givingUp || logout.uri === null) {
      await markLogoutFailed(this.db, logout, record);
      return retryAt;
    }
    await this.db.transaction().execute(async (trx) => {
      await markLogoutFailed(trx, logout, record);
      await recordAudit(trx, {
        at: now,
        actor: 'system',
        action: 'backchannel_logout_failed',
        subject: `client:${logout.clientId}`,
        details: { user: `user:${logout.userId}`, reason: logout.reason, attempts: logout.attempts, error },
      });
    });
    return null;
  }
}
