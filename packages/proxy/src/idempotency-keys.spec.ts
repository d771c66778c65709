import { describe, expect, it } from 'vitest';
import { IdempotencyKeys } from './idempotency-keys.js';

describe(IdempotencyKeys, () => {
  it('never repeats a key, within one proxy or across proxies', () => {
    const first = new IdempotencyKeys();
    const second = new IdempotencyKeys();
    const keys = [
      ...Array.from({ length: 1000 }, () => first.next()),
      ...Array.from({ length: 1000 }, () => second.next()),
    ];
    expect(new Set(keys).size).toBe(2000);
  });

  it('counts under its prefix', () => {
    const keys = new IdempotencyKeys('p');
    expect([keys.next(), keys.next()]).toEqual(['p:1', 'p:2']);
  });
});
