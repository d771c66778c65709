import { describe, expect, it } from 'vitest';
import { randomHex } from './random-hex.js';

describe(randomHex, () => {
  it('gives the asked number of random bytes as lowercase hex, different each time', () => {
    const drawn = new Set(Array.from({ length: 64 }, () => randomHex(16)));
    expect(drawn.size).toBe(64);
    for (const value of drawn) expect(value).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomHex(300)).toHaveLength(600);
  });

  it('refuses a byte count that is not a positive whole number', () => {
    for (const count of [0, -1, 1.5, Number.NaN]) expect(() => randomHex(count)).toThrow(RangeError);
  });
});
