import { describe, expect, it } from 'vitest';
import { cellContentVersion } from './cell-content-version.js';

describe(cellContentVersion, () => {
  it('is the same for the same type and source, and differs when either changes', () => {
    const version = cellContentVersion('code', 'x = 1');
    expect(version).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(cellContentVersion('code', 'x = 1')).toBe(version);
    expect(cellContentVersion('code', 'x = 2')).not.toBe(version);
    expect(cellContentVersion('markdown', 'x = 1')).not.toBe(version);
    // The separator keeps type and source apart.
    expect(cellContentVersion('code', '')).not.toBe(cellContentVersion('cod', 'e'));
  });
});
