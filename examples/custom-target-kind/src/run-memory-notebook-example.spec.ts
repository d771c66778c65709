import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMemoryNotebookExample } from './run-memory-notebook-example.js';

describe(runMemoryNotebookExample, () => {
  it('is one backend with its own handle: connect_notebook reaches a memory: notebook, a tool writes it, another peer reads it, running a cell is refused (no kernel), and a restart of the store is survived by its own recovery', async () => {
    expect(await runMemoryNotebookExample()).toEqual({
      kinds: ['local-path', 'notebook-id', 'acme.memory'],
      reportedTarget: 'memory:scratch',
      cellCreated: true,
      peerSees: ['# notes kept in memory'],
      runAnswer: 'refused',
      afterRestart: { recoveredBy: 'acme.memory.rejoin', origin: 'rejoin', sources: ['# notes kept in memory'] },
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
