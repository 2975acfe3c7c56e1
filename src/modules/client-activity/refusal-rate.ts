/** A token bucket: `burst` at once, then `perSecond`. */
interface Bucket {
  tokens: number;
  at: number;
}

export interface RefusalRateOptions {
  /** Each client_id's bucket. */
  perClient: { burst: number; perSecond: number };
  /** The instance's bucket, whatever the client_id: a flood of made-up client_ids is bounded too. */
  total: { burst: number; perSecond: number };
  /** Buckets kept; past that they are all dropped (a flood of client_ids cannot grow memory). */
  maxClients: number;
}

export const REFUSAL_RATE: RefusalRateOptions = {
  perClient: { burst: 5, perSecond: 2 },
  total: { burst: 50, perSecond: 20 },
  maxClients: 10_000,
};

function refill(bucket: Bucket, rate: { burst: number; perSecond: number }, now: number): void {
  const elapsed = Math.max(0, now - bucket.at) / 1000;
  bucket.tokens = Math.min(rate.burst, bucket.tokens + elapsed * rate.perSecond);
  bucket.at = now;
}

/**
 * How many refused requests an instance writes: anyone may send requests in a public client's
 * name, so the log's writes are bounded per client_id and in total, in memory. What is over the
 * bound is not written (the log keeps the latest anyway, and a flood repeats itself).
 */
export class RefusalRate {
  private readonly buckets = new Map<string, Bucket>();
  private readonly total: Bucket;

  constructor(private readonly options: RefusalRateOptions = REFUSAL_RATE) {
    this.total = { tokens: options.total.burst, at: 0 };
  }

  /** Whether a refusal of `clientId` may be written at `now` (ms); if so, it is counted. */
  take(clientId: string, now: number): boolean {
    let bucket = this.buckets.get(clientId);
    if (bucket === undefined) {
      if (this.buckets.size >= this.options.maxClients) this.buckets.clear();
      bucket = { tokens: this.options.perClient.burst, at: now };
      this.buckets.set(clientId, bucket);
    }
    refill(bucket, this.options.perClient, now);
    refill(this.total, this.options.total, now);
    if (bucket.tokens < 1 || this.total.tokens < 1) return false;
    bucket.tokens -= 1;
    this.total.tokens -= 1;
    return true;
  }
}
