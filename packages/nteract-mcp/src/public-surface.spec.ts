import { describe, expect, it } from 'vitest';

/**
 * The public surface of nteract-mcp, pinned: adding or removing an export is a deliberate change
 * to this list (and to its users), never a side effect of a refactoring.
 */
describe('the public surface of nteract-mcp', () => {
  it('exports exactly the documented names from the main entry', async () => {
    const surface = Object.keys(await import('./index.js')).sort();
    expect(surface).toEqual([
      'bundledChildEntry',
      'childPlugins',
      'nteractMcpUsage',
      'proxyPlugins',
      'runNteractMcp',
      'runNteractProxy',
      'runRuntMcp',
      'runtMcpUsage',
      'runtimedEntry',
    ]);
  });
});
