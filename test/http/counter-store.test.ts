import { describe, expect, it } from 'vitest';
import { MemoryCounterStore } from '../../src/http/counter-stores.js';

/* The in-process store of the rate limits: fixed windows, and memory bounded to the live keys. */

function storeAt(maxKeys = 1000) {
  const clock = { now: 0 };
  return { clock, store: new MemoryCounterStore(maxKeys, () => clock.now) };
}

describe('MemoryCounterStore', () => {
  it('counts hits in a window that starts with the first one and ends windowMs later', () => {
    const { clock, store } = storeAt();
    expect(store.hit('a', 60_000)).toEqual({ count: 1, resetAt: 60_000 });
    clock.now = 59_999;
    expect(store.hit('a', 60_000)).toEqual({ count: 2, resetAt: 60_000 });
    expect(store.hit('b', 60_000)).toEqual({ count: 1, resetAt: 119_999 });
    clock.now = 60_000;
    expect(store.hit('a', 60_000)).toEqual({ count: 1, resetAt: 120_000 });
  });

  it('forgets ended windows as new ones start, so memory holds only live keys', () => {
    const { clock, store } = storeAt();
    for (let i = 0; i < 100; i++) store.hit(`old-${i}`, 60_000);
    clock.now = 30_000;
    store.hit('live', 60_000);
    expect(store.size).toBe(101);
    clock.now = 60_000;
    store.hit('new', 60_000);
    expect(store.size).toBe(2); // the 100 ended windows went; 'live' and 'new' stay
    expect(store.hit('live', 60_000).count).toBe(2);
  });

  it('keeps at most maxKeys keys, forgetting the oldest', () => {
    const { store } = storeAt(3);
    for (const key of ['a', 'b', 'c', 'd']) store.hit(key, 60_000);
    expect(store.size).toBe(3);
    expect(store.hit('a', 60_000).count).toBe(1); // forgotten, so counted afresh
    expect(store.hit('d', 60_000).count).toBe(2);
  });
});
