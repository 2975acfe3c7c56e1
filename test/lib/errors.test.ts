import { describe, expect, it } from 'vitest';
import { AuthorizationPending, InvalidGrant, SlowDown } from '../../src/lib/errors.js';

describe('stack traces of refusals', () => {
  it("are not captured for a waiting device's polling answers, and are for other errors", () => {
    const limit = Error.stackTraceLimit;
    for (const polling of [new AuthorizationPending(), new SlowDown()]) {
      expect(polling.stack?.split('\n')).toHaveLength(1);
      expect(polling.toBody().error).toMatch(/^(authorization_pending|slow_down)$/);
    }
    expect(new InvalidGrant().stack?.split('\n').length).toBeGreaterThan(1);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
