import { describe, expect, it } from 'vitest';
import { UnsettledCalls } from './unsettled-calls.js';

describe('UnsettledCalls', () => {
  it('matches a retry by tool and arguments in any key order, until it is settled', () => {
    const calls = new UnsettledCalls({ now: () => 0 });
    calls.remember('create_cell', { source: 'a', index: 1, options: { x: 1, y: 2 } }, 'k1');
    expect(calls.keyOf('set_cell', { source: 'a', index: 1, options: { x: 1, y: 2 } })).toBeUndefined();
    expect(calls.keyOf('create_cell', { source: 'a', index: 2, options: { x: 1, y: 2 } })).toBeUndefined();
    expect(calls.keyOf('create_cell', { options: { y: 2, x: 1 }, index: 1, source: 'a' })).toBe('k1');
    expect(calls.keyOf('create_cell', { source: 'a', index: 1, options: { x: 1, y: 2 } })).toBe('k1');
    calls.settle('create_cell', { source: 'a', index: 1, options: { y: 2, x: 1 } }, 'k1');
    expect(calls.keyOf('create_cell', { source: 'a', index: 1, options: { x: 1, y: 2 } })).toBeUndefined();
  });

  it('forgets the oldest beyond its capacity, and a call older than its time to live', () => {
    let now = 0;
    const calls = new UnsettledCalls({ now: () => now, capacity: 2, ttlMs: 1000 });
    calls.remember('t', { n: 1 }, 'k1');
    calls.remember('t', { n: 2 }, 'k2');
    calls.remember('t', { n: 3 }, 'k3');
    expect(calls.size).toBe(2);
    expect(calls.keyOf('t', { n: 1 })).toBeUndefined();
    expect(calls.keyOf('t', { n: 2 })).toBe('k2');
    calls.settle('t', { n: 2 }, 'k2');
    now = 1001;
    expect(calls.keyOf('t', { n: 3 })).toBeUndefined();
    expect(calls.size).toBe(0);
  });

  it('is settled by the call that made it, once its outcome is known, but not for a later one of another key', () => {
    const calls = new UnsettledCalls({ now: () => 0 });
    calls.remember('t', { n: 1 }, 'k1');
    calls.settle('t', { n: 1 }, 'k0');
    expect(calls.size).toBe(1);
    calls.settle('t', { n: 1 }, 'k1');
    expect(calls.keyOf('t', { n: 1 })).toBeUndefined();
  });
});
