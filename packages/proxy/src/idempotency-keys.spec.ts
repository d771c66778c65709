import { idempotencyMetaKey } from '@nteract-mcp/core';
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

  it('stamps a key in place unless the call carries one; a _meta that is not an object is left as it came', () => {
    const keys = new IdempotencyKeys('p');
    const bare: { _meta?: unknown } = {};
    const kept = { _meta: { [idempotencyMetaKey]: 'client', other: 1 } };
    const odd = [{ _meta: null }, { _meta: 'x' }, { _meta: [1] }];
    keys.stamp(bare);
    keys.stamp(kept);
    for (const params of odd) keys.stamp(params);
    expect(bare).toEqual({ _meta: { [idempotencyMetaKey]: 'p:1' } });
    expect(kept).toEqual({ _meta: { [idempotencyMetaKey]: 'client', other: 1 } });
    expect(odd).toEqual([{ _meta: null }, { _meta: 'x' }, { _meta: [1] }]);
  });
});
