import { describe, expect, it, vi } from 'vitest';
import { HostedIdempotencyLedger, maxKeptKeysPerNotebook } from './hosted-idempotency-ledger.js';

describe(HostedIdempotencyLedger, () => {
  it('answers a key seen before for the notebook with the first call, across the handles that ask', async () => {
    const ledger = new HostedIdempotencyLedger();
    const insert = vi.fn(async () => 'cell-1');
    // The first handle inserts; after a loss, the handle of the notebook on the new kernel gets the replay.
    expect(await ledger.once('nb', 'key-1', insert)).toBe('cell-1');
    expect(await ledger.once('nb', 'key-1', async () => 'cell-2')).toBe('cell-1');
    expect(insert).toHaveBeenCalledTimes(1);
    // Another notebook, or no key: its own call.
    expect(await ledger.once('other', 'key-1', async () => 'other-cell')).toBe('other-cell');
    expect(await ledger.once('nb', undefined, async () => 'unkeyed')).toBe('unkeyed');
  });

  it('answers a replay while the first call is pending with that call, and forgets a call that failed', async () => {
    const ledger = new HostedIdempotencyLedger();
    let finish: (value: string) => void = () => undefined;
    const pending = ledger.once('nb', 'k', () => new Promise<string>((resolve) => (finish = resolve)));
    const replay = ledger.once('nb', 'k', async () => 'second');
    finish('first');
    expect(await Promise.all([pending, replay])).toEqual(['first', 'first']);
    await expect(ledger.once('nb', 'refused', async () => Promise.reject(new Error('stale')))).rejects.toThrow('stale');
    expect(await ledger.once('nb', 'refused', async () => 'applied')).toBe('applied');
  });

  it(`keeps at most ${maxKeptKeysPerNotebook} keys per notebook, forgetting the oldest`, async () => {
    const ledger = new HostedIdempotencyLedger();
    for (let i = 0; i <= maxKeptKeysPerNotebook; i++) await ledger.once('nb', `k${i}`, async () => i);
    expect(await ledger.once('nb', 'k0', async () => 'again')).toBe('again');
    expect(await ledger.once('nb', `k${maxKeptKeysPerNotebook}`, async () => 'again')).toBe(maxKeptKeysPerNotebook);
  });
});
