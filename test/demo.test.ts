import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processesWithHome } from './support/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('npm run demo (scripts/demo.mjs on the built bins)', () => {
  it('walks an agent session through every promise, exits 0 with a readable transcript, and leaves nothing behind', {
    timeout: 300_000,
  }, async () => {
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [join(root, 'scripts', 'demo.mjs')],
        { cwd: root, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
    const transcript = result.stdout;
    expect(result.code, `${transcript}\n${result.stderr}`).toBe(0);
    const steps = [...transcript.matchAll(/^\[(\d+)\] (.*)$/gm)].map((match) => match[2]);
    expect(steps).toEqual([
      'tools/list',
      'create_notebook(ephemeral=false)',
      'create_cell "x = 41" and run it',
      'a matplotlib plot',
      'kill the MCP server child (SIGKILL) and send the next call at once: "x + 1"',
      'restart the daemon: `runtimed stop`, then the next call',
      'save_notebook to a path',
      'disconnect_notebook, close the MCP connection, connect a new one by path',
    ]);
    expect(transcript).toMatch(/the child auto-started runtimed \(pid \d+\)/);
    expect(transcript).toMatch(/an MCP image content item: image\/png, \d+x\d+ px/);
    expect(transcript).toMatch(/banner: \[nteract\] MCP server restarted, session reconnected to notebook /);
    expect(transcript).toContain('x + 1 = 42 (the same kernel');
    expect(transcript).toMatch(/rejoined: notebook \S+ \(origin rejoin\), new daemon pid \d+, 3 cells kept/);
    expect(transcript).toMatch(/the product says \(kernel_notice\): .*new kernel/);
    expect(transcript).toMatch(/connect_notebook\(path\) in a new session: 4 cells\n {6}0: x = 41\n/);
    expect(transcript.trimEnd().endsWith('PASS: every step behaved as promised')).toBe(true);

    // It cleaned up: the temp HOME is gone and nothing it started still runs.
    const home = /HOME {5}(\S+) \(fresh; no daemon running\)/.exec(transcript)?.[1];
    expect(home).toBeDefined();
    expect(existsSync(dirname(home as string))).toBe(false);
    expect(processesWithHome(home as string)).toEqual([]);
  });
});
