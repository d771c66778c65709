import { describe, expect, it, vi } from 'vitest';
import { randomHex } from './random-hex.js';

// Lets a test take the path of a system without a random device (Windows).
const device = vi.hoisted(() => ({ missing: false, refused: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    openSync: (...args: Parameters<typeof fs.openSync>) => {
      if (device.missing) {
        device.refused += 1;
        throw Object.assign(new Error(`ENOENT: no such file, open '${args[0]}'`), { code: 'ENOENT' });
      }
      return fs.openSync(...args);
    },
  };
});

describe(randomHex, () => {
  it('gives the asked number of random bytes as lowercase hex, different each time', () => {
    const drawn = new Set(Array.from({ length: 64 }, () => randomHex(16)));
    expect(drawn.size).toBe(64);
    for (const value of drawn) expect(value).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomHex(300)).toHaveLength(600);
  });

  it('draws from node:crypto where there is no random device', () => {
    device.missing = true;
    try {
      const drawn = new Set(Array.from({ length: 16 }, () => randomHex(8)));
      expect(drawn.size).toBe(16);
      for (const value of drawn) expect(value).toMatch(/^[0-9a-f]{16}$/);
      expect(device.refused).toBe(16);
    } finally {
      device.missing = false;
    }
  });

  it('refuses a byte count that is not a positive whole number', () => {
    for (const count of [0, -1, 1.5, Number.NaN]) expect(() => randomHex(count)).toThrow(RangeError);
  });
});
