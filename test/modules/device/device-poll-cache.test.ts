import { describe, expect, it } from 'vitest';
import { DevicePollCache, type PendingPoll } from '../../../src/modules/device/device-poll-cache.js';

const T0 = 1_780_000_000_000;

function pending(overrides: Partial<PendingPoll> = {}): PendingPoll {
  return { id: 7, clientPk: 3, expiresAt: T0 + 600_000, intervalSeconds: 5, lastPollAt: T0, ...overrides };
}

function listeningCache(maxEntries = 10): DevicePollCache {
  const cache = new DevicePollCache({ maxEntries });
  cache.setListening(true);
  return cache;
}

describe('the waiting devices kept in memory', () => {
  it('answers pending after the interval, and slow_down sooner, growing the interval by 5 s each time', () => {
    const cache = listeningCache();
    cache.set('h', pending(), cache.readVersion);
    expect(cache.poll('h', 3, T0 + 5000)).toEqual({ slowDown: false });
    expect(cache.poll('h', 3, T0 + 6000)).toEqual({ slowDown: true, intervalSeconds: 10 });
    // Measured from the last poll, against the grown interval.
    expect(cache.poll('h', 3, T0 + 15_000)).toEqual({ slowDown: true, intervalSeconds: 15 });
    expect(cache.poll('h', 3, T0 + 30_000)).toEqual({ slowDown: false });
  });

  it('leaves to the database another client, an unknown code and an expired request', () => {
    const cache = listeningCache();
    cache.set('h', pending(), cache.readVersion);
    expect(cache.poll('h', 4, T0 + 5000)).toBeUndefined();
    expect(cache.poll('other', 3, T0 + 5000)).toBeUndefined();
    expect(cache.poll('h', 3, T0 + 600_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('forgets a request at its d: announcement, and everything at one it does not know', () => {
    const cache = listeningCache();
    cache.set('h', pending(), cache.readVersion);
    cache.set('k', pending({ id: 8 }), cache.readVersion);
    for (const other of ['t:abc', 'g:7', 'u:7', 'c:3', 's:marker', 'd:9']) cache.handle(other);
    expect(cache.size).toBe(2);
    cache.handle('d:7');
    expect(cache.poll('h', 3, T0 + 5000)).toBeUndefined();
    expect(cache.poll('k', 3, T0 + 5000)).toEqual({ slowDown: false });
    cache.handle('x:anything');
    expect(cache.size).toBe(0);
  });

  it('keeps nothing read before an announcement, nor while announcements do not arrive', () => {
    const cache = listeningCache();
    const readVersion = cache.readVersion;
    cache.handle('d:1'); // a decision committed while the poll's statement ran
    cache.set('h', pending(), readVersion);
    expect(cache.size).toBe(0);

    cache.set('h', pending(), cache.readVersion);
    cache.setListening(false);
    expect(cache.size).toBe(0);
    cache.set('h', pending(), cache.readVersion);
    expect(cache.poll('h', 3, T0 + 5000)).toBeUndefined();
  });

  it('makes room by forgetting the oldest request', () => {
    const cache = listeningCache(2);
    cache.set('a', pending({ id: 1 }), cache.readVersion);
    cache.set('b', pending({ id: 2 }), cache.readVersion);
    cache.set('c', pending({ id: 3 }), cache.readVersion);
    expect(cache.size).toBe(2);
    expect(cache.poll('a', 3, T0 + 5000)).toBeUndefined();
    expect(cache.poll('c', 3, T0 + 5000)).toEqual({ slowDown: false });
    // The forgotten one's announcement finds nothing; the kept one's still works.
    cache.handle('d:1');
    cache.handle('d:2');
    expect(cache.poll('b', 3, T0 + 5000)).toBeUndefined();
  });
});
