import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { activateInspector, heapFigures } from '../bench/lib/inspect-memory.mjs';
import { startUserSession, type UserSession } from './support/start-user-session.js';
import { waitFor } from './support/wait-for.js';

/**
 * A large output as a user meets it, through the shipped bins (fresh HOME, the daemon auto-started):
 * a cell prints 20 MB of distinct lines. What it adds to the daemon's memory, read from outside
 * after a full GC forced over the inspector, stays within twice the output (the output in the
 * room, not also in the journal's memory, the execution records' or a serialization left behind);
 * the child, whose copy of the cell holds a reference to the daemon's blob, keeps less than half
 * of it (it held the whole text before);
 * get_results pages give the output back byte for byte; after a SIGKILL of the daemon the output
 * is still there, and in the saved file.
 */

const sessions: UserSession[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** 2,000,000 lines of 10 bytes: `000000000\n`, `000000001\n`, … (20,000,000 bytes). */
const lines = 2_000_000;
const expectedOutput = (): string => {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(`${String(i).padStart(9, '0')}\n`);
  return parts.join('');
};
const source = `print(''.join(f'{i:09d}\\n' for i in range(${lines})), end='')`;

interface OutputsPage {
  readonly text: string;
  readonly next_offset?: number;
  readonly total_chars: number;
}

/** The whole outputs document of `tool` (get_results or get_cell), read page by page. */
async function readAllPages(session: UserSession, tool: string, args: Record<string, unknown>): Promise<string> {
  const pages: string[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const answer = await session.call(tool, { ...args, offset, length: 20_000_000 });
    expect(answer.isError, answer.text.slice(0, 500)).toBe(false);
    const page = answer.json?.outputs_page as OutputsPage | undefined;
    if (page === undefined) throw new Error(`no outputs page: ${answer.text.slice(0, 500)}`);
    pages.push(page.text);
    offset = page.next_offset;
  }
  return pages.join('');
}

/** The body of an outputs document of one output: what follows its header line. */
const bodyOf = (document: string): string => document.slice(document.indexOf('\n') + 1);

const mb = (bytes: number): number => bytes / 1024 / 1024;

describe('a 20 MB output through the shipped bins', () => {
  it('adds at most twice its size to the daemon and less than half to the child after a GC, pages back byte for byte, and survives a daemon SIGKILL into the saved file', {
    timeout: 600_000,
  }, async () => {
    const session = await startUserSession({ env: { NODE_OPTIONS: '--inspect-port=127.0.0.1:0' } });
    sessions.push(session);
    const path = join(session.dirs.project, 'big.ipynb');
    expect((await session.call('create_notebook', { ephemeral: false })).isError).toBe(false);
    expect((await session.call('save_notebook', { path })).isError).toBe(false);
    // Warm-up: the kernel started, the path of an execution and its paging run once.
    const warm = await session.call('create_cell', { source: "print('warm')", and_run: true, timeout_secs: 180 });
    expect(warm.json?.status, warm.text).toBe('done');
    await session.call('get_results', { execution_id: warm.json?.execution_id, offset: 0 });

    const daemon = session.pids.daemon() as number;
    const child = session.pids.child() as number;
    await Promise.all([activateInspector(daemon), activateInspector(child)]);
    const before = (await heapFigures(daemon)).after.rss;
    const childBefore = (await heapFigures(child)).after.rss;

    const ran = await session.call('create_cell', { source, and_run: true, timeout_secs: 300 });
    expect(ran.json?.status, ran.text.slice(0, 500)).toBe('done');
    const cellId = String(ran.json?.cell_id);
    const outputBytes = lines * 10;
    const growth = (await heapFigures(daemon)).after.rss - before;
    expect(growth, `daemon RSS after a GC grew ${growth.toFixed(1)} MB`).toBeLessThanOrEqual(2 * mb(outputBytes));
    const childGrowth = (await heapFigures(child)).after.rss - childBefore;
    expect(childGrowth, `child RSS after a GC grew ${childGrowth.toFixed(1)} MB`).toBeLessThan(0.5 * mb(outputBytes));

    const expected = expectedOutput();
    expect(bodyOf(await readAllPages(session, 'get_results', { execution_id: ran.json?.execution_id }))).toBe(expected);

    await session.faults.killDaemon();
    const restored = await waitFor(
      'the cell read again after the daemon restarted',
      async () => {
        const answer = await session.call('get_cell', { cell_id: cellId, offset: 0, length: 100 });
        return answer.isError ? undefined : answer;
      },
      { timeoutMs: 120_000 },
    );
    expect((restored.json?.outputs_page as OutputsPage | undefined)?.total_chars).toBeGreaterThan(outputBytes);
    expect(bodyOf(await readAllPages(session, 'get_cell', { cell_id: cellId }))).toBe(expected);
    expect((await session.call('save_notebook', {})).isError).toBe(false);
    const saved = JSON.parse(readFileSync(path, 'utf8')) as {
      cells: { id: string; outputs?: { text?: string | string[] }[] }[];
    };
    const text = saved.cells.find((cell) => cell.id === cellId)?.outputs?.[0]?.text;
    expect(Array.isArray(text) ? text.join('') : text).toBe(expected);
  });
});
