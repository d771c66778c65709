import { describe, expect, it } from 'vitest';

/**
 * The public surface of @nteract-mcp/plugin-local-daemon, pinned: adding or removing an export is a deliberate change
 * to this list (and to its users), never a side effect of a refactoring.
 */
describe('the public surface of @nteract-mcp/plugin-local-daemon', () => {
  it('exports exactly the documented names from the main entry', async () => {
    const surface = Object.keys(await import('./index.js')).sort();
    expect(surface).toEqual([
      'DaemonStarter',
      'DaemonWatchLoop',
      'LocalDaemonOptions',
      'LocalPathNotebookBackend',
      'NotebookIdNotebookBackend',
      'RuntimedDaemonPort',
      'RuntimedNotebookHandle',
      'RuntimedSocketLocator',
      'ShowNotebookTool',
      'createLocalDaemonPlugin',
      'inspectPathOnDisk',
      'notebookUuidPattern',
      'parseLocalPathTarget',
      'parseNotebookIdTarget',
      'restartBackoffInitialMs',
      'restartBackoffMaxMs',
    ]);
  });
});
