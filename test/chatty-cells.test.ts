import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNotebookFile, startUserSession, type UserSession, waitFor } from './support/index.js';

/**
 * A cell that logs the way a training loop does, on the user path: the shipped proxy in a fresh
 * HOME, nothing pre-started (the child auto-starts the daemon), a real ipykernel, the MCP SDK
 * client. Each line is its own kernel message (`flush=True`), so the daemon and the child handle
 * every one: the session must come through 100,000 of them whole.
 */

let session: UserSession;
let notebookPath: string;

beforeAll(async () => {
  session = await startUserSession();
  notebookPath = join(session.dirs.project, 'chatty.ipynb');
  const created = await session.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
  const bound = await session.call('save_notebook', { path: notebookPath });
  expect(bound.isError, bound.text).toBe(false);
}, 180_000);

afterAll(async () => {
  await session?.stop();
});

describe('a chatty cell through the shipped proxy (real kernel, auto-started daemon)', () => {
  it('prints 100,000 lines and a progress bar: the session survives, the daemon stays, the answer and the file end with the last line', {
    timeout: 600_000,
  }, async () => {
    const lines = 100_000;
    const source = [
      'import sys',
      `for i in range(${lines}):`,
      '    print("step", i, "loss", 1 / (i + 1), flush=True)',
      'for percent in range(0, 101, 5):',
      '    sys.stdout.write(f"\\rprogress {percent:3d}%")',
      '    sys.stdout.flush()',
      'print()',
      'print("finished")',
    ].join('\n');
    const created = await session.call('create_cell', { source });
    expect(created.isError, created.text).toBe(false);
    const cellId = String(created.json?.cell_id);
    const daemonBefore = await waitFor('the daemon to run', () => session.pids.daemon(), { timeoutMs: 60_000 });
    // Refused while the kernel starts; the first run that is not refused is the answer.
    const answer = await waitFor(
      'the kernel to run the cell',
      async () => {
        const raw = await session.client.callTool(
          { name: 'execute_cell', arguments: { cell_id: cellId, timeout_secs: 500 } },
          CallToolResultSchema,
          { timeout: 520_000 },
        );
        return raw.isError ? undefined : raw;
      },
      { timeoutMs: 540_000, intervalMs: 500 },
    );
    const [first] = answer.content as { type: string; text?: string }[];
    const result = JSON.parse(first?.text ?? '{}') as { status?: string; outputs?: { text?: string }[] };
    expect(result.status).toBe('done');
    const shown = (result.outputs ?? []).map((output) => output.text ?? '').join('');
    expect(shown).toContain(`step ${lines - 1} loss`);
    // The bar is one line of text, as it ended.
    expect(shown).toMatch(/\nprogress 100%\nfinished\n$/);
    expect(shown).not.toContain('progress  95%');
    // The same daemon ran it all: it was never too busy to answer and replaced.
    expect(session.pids.daemon()).toBe(daemonBefore);
    // The session still answers: an edit goes through.
    const edited = await session.call('create_cell', { source: 'after = 1' });
    expect(edited.isError, edited.text).toBe(false);

    const saved = await session.call('save_notebook', {});
    expect(saved.isError, saved.text).toBe(false);
    const text = readNotebookFile(notebookPath).find((cell) => cell.id === cellId)?.streamText ?? '';
    expect(text.split('\n')).toHaveLength(lines + 3);
    expect(text).toContain(`\nstep ${lines - 1} loss 1e-05\n`);
    expect(text.endsWith('\nprogress 100%\nfinished\n')).toBe(true);
  });
});
