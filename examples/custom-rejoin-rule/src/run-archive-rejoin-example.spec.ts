import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runArchiveRejoinExample } from './run-archive-rejoin-example.js';

describe(runArchiveRejoinExample, () => {
  it('is one backend: connects its own archive: kind through connect_notebook, and core rejoins it through the reopen of that backend (the working copy again); one never checked out is evicted', async () => {
    expect(await runArchiveRejoinExample()).toEqual({
      kinds: ['local-path', 'notebook-id', 'acme.archive'],
      connectedFile: 'report.ipynb',
      reportedTarget: 'archive:report.ipynb',
      cellCreated: true,
      rejoined: 'published',
      rejoinedFile: 'report.ipynb',
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
