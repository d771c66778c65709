import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runArchiveRejoinExample } from './run-archive-rejoin-example.js';

describe(runArchiveRejoinExample, () => {
  it('finds the archived notebook, opens it from the archive, and evicts the vanished one', async () => {
    expect(await runArchiveRejoinExample()).toEqual({
      strategies: ['acme.archive-rejoin', 'local-daemon.saved-path', 'local-daemon.notebook-id'],
      archived: 'published',
      openedPath: '/archive/report.ipynb',
      vanished: 'evicted',
    });
  });

  it('runs from its build and checks itself', () => {
    const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
    const result = spawnSync(process.execPath, [main], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('example check passed');
    expect(result.stdout).toBe('');
  });
});
