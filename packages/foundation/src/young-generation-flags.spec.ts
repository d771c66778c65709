import { describe, expect, it } from 'vitest';
import { youngGenerationFlags, youngGenerationSemiSpaceMb } from './young-generation-flags.js';

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
