import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  holdYoungGenerationAtStart,
  youngGenerationFlags,
  youngGenerationSemiSpaceMb,
} from './young-generation-flags.js';

describe(youngGenerationFlags, () => {
  it('caps the young generation', () => {
    expect(youngGenerationFlags({})).toEqual([`--max-semi-space-size=${youngGenerationSemiSpaceMb}`]);
  });

  it('leaves it to a --max-semi-space-size the user set in NODE_OPTIONS', () => {
    expect(youngGenerationFlags({ NODE_OPTIONS: '--trace-warnings --max-semi-space-size=32' })).toEqual([]);
  });

  it('keeps the cap when NODE_OPTIONS sets other flags', () => {
    expect(youngGenerationFlags({ NODE_OPTIONS: '--max-old-space-size=512' })).toEqual([
      `--max-semi-space-size=${youngGenerationSemiSpaceMb}`,
    ]);
  });
});

describe(holdYoungGenerationAtStart, () => {
  /** The young generation's size (MB) a Node process ends with after work whose objects survive scavenges. */
  function youngGenerationAfterWork(hold: boolean, env: Record<string, string> = {}): number {
    const foundation = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { getHeapSpaceStatistics } from 'node:v8';
      import { holdYoungGenerationAtStart } from ${JSON.stringify(foundation)};
      if (${hold}) holdYoungGenerationAtStart(process.env);
      const window = new Array(20_000);
      for (let i = 0; i < 2_000_000; i++) window[i % 20_000] = { i, text: 'x' + i };
      const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
      process.stdout.write(String(young.space_size / 1048576));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    return Number(out);
  }

  it('keeps the young generation at its first size (2 × 1 MB) through work that grows it otherwise', () => {
    expect(youngGenerationAfterWork(false)).toBeGreaterThan(2);
    expect(youngGenerationAfterWork(true)).toBeLessThanOrEqual(2);
  });

  it('leaves it to a --max-semi-space-size the user set in NODE_OPTIONS', () => {
    expect(youngGenerationAfterWork(true, { NODE_OPTIONS: '--max-semi-space-size=8' })).toBeGreaterThan(2);
  });
});
