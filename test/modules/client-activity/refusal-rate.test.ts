import { describe, expect, it } from 'vitest';
import { REFUSAL_RATE, RefusalRate } from '../../../src/modules/client-activity/refusal-rate.js';

/*
 * The bound on the refused-request log's writes: a few a second per client_id, and a bound for the
 * instance whatever the client_ids, so a flood in made-up or public client_ids costs little.
 */

const taken = (rate: RefusalRate, ids: string[], at: number) => ids.filter((id) => rate.take(id, at)).length;

describe('RefusalRate', () => {
  it('gives each client_id its burst, then its rate per second', () => {
    const rate = new RefusalRate();
    const burst = REFUSAL_RATE.perClient.burst;
    expect(taken(rate, Array(20).fill('pk_site'), 1_000)).toBe(burst);
    expect(taken(rate, Array(20).fill('pk_site'), 1_500)).toBe(1);
    expect(taken(rate, Array(20).fill('pk_site'), 2_500)).toBe(2);
    expect(taken(rate, Array(20).fill('pk_site'), 60_000)).toBe(burst);
  });

  it('bounds the instance whatever the client_ids, and forgets its buckets past maxClients', () => {
    const rate = new RefusalRate({ ...REFUSAL_RATE, maxClients: 100 });
    const strangers = Array.from({ length: 1_000 }, (_, n) => `pk_made_up_${n}`);
    expect(taken(rate, strangers, 1_000)).toBe(REFUSAL_RATE.total.burst);
    expect(taken(rate, strangers, 2_000)).toBe(REFUSAL_RATE.total.perSecond);
    // 1,000 client_ids seen, at most 100 buckets kept.
    expect((rate as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThanOrEqual(100);
  });
});
