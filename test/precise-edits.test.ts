import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** nteract-mcp as a user runs it: the shipped proxy, a fresh HOME, the daemon auto-started, a real kernel. */
async function start(): Promise<UserSession> {
  const session = await startUserSession();
  sessions.push(session);
  return session;
}

const sourcesOf = async (session: UserSession): Promise<string[]> =>
  (((await session.call('get_all_cells', { format: 'json' })).json?.cells ?? []) as { source: string }[]).map(
    (cell) => cell.source,
  );

describe('precise edits and scratch runs, as a user runs nteract-mcp', () => {
  it('replaces within a cell, inserts next to a cell, clears outputs and runs scratch code, with their errors', {
    timeout: 180_000,
  }, async () => {
    const session = await start();
    expect((await session.call('create_notebook', {})).isError).toBe(false);

    // The first run right after create waits for the kernel instead of failing.
    const first = await session.call('create_cell', { source: 'total = 40\nprint(total)', and_run: true });
    expect(first.isError, first.text).toBe(false);
    expect(first.text).toContain('40');
    const cellId = first.json?.cell_id as string;

    const replaced = await session.call('replace_in_cell', { cell_id: cellId, find: '40', replace: '41' });
    expect(replaced.json).toMatchObject({ replacements: 1, source: 'total = 41\nprint(total)' });
    const regex = await session.call('replace_in_cell', {
      cell_id: cellId,
      find: '^total = (\\d+)',
      replace: 'total = $1 + 1',
      regex: true,
    });
    expect(regex.isError, regex.text).toBe(false);
    const missing = await session.call('replace_in_cell', { cell_id: cellId, find: 'nothing here', replace: 'x' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('No match');
    const badPattern = await session.call('replace_in_cell', { cell_id: cellId, find: '[', replace: '', regex: true });
    expect(badPattern.isError).toBe(true);
    expect(badPattern.text).toContain('Invalid regular expression');

    const executed = await session.call('execute_cell', { cell_id: cellId });
    expect(executed.text).toContain('42');

    const after = await session.call('create_cell', { source: 'after = 1', after_cell_id: cellId });
    const before = await session.call('create_cell', { source: 'before = 1', before_cell_id: cellId });
    expect(after.isError || before.isError).toBe(false);
    expect(await sourcesOf(session)).toEqual(['before = 1', 'total = 41 + 1\nprint(total)', 'after = 1']);
    const unknownAnchor = await session.call('create_cell', { source: 'x', after_cell_id: 'no-such-cell' });
    expect(unknownAnchor.isError).toBe(true);
    expect(unknownAnchor.text).toBe('Cell not found: no-such-cell');

    // Scratch: the kernel's variables are there; nothing is added to the notebook.
    const scratch = await session.call('run_code', { code: 'print(total * 2)' });
    expect(scratch.json).toMatchObject({ status: 'ok' });
    expect(scratch.text).toContain('84');
    const scratchError = await session.call('run_code', { code: 'undefined_name' });
    expect(scratchError.json).toMatchObject({ status: 'error' });
    expect(scratchError.text).toContain('NameError');
    expect(await sourcesOf(session)).toHaveLength(3);

    const cleared = await session.call('clear_outputs', {});
    expect(cleared.json).toEqual({ cleared: [cellId] });
    const cell = await session.call('get_cell', { cell_id: cellId });
    expect(cell.json).toMatchObject({ outputs: [] });
    const unknown = await session.call('clear_outputs', { cell_id: 'no-such-cell' });
    expect(unknown.isError).toBe(true);
  });

  it("says an untitled notebook saved to a file is no longer ephemeral, and that a disconnect was the agent's", {
    timeout: 120_000,
  }, async () => {
    const session = await start();
    const created = await session.call('create_notebook', {});
    const notebookId = created.json?.notebook_id as string;
    const ephemeral = () =>
      session
        .call('session_status')
        .then((status) => (status.json?.active as { ephemeral?: unknown } | null)?.ephemeral);
    expect(await ephemeral()).toBe(true);
    const path = join(session.dirs.project, 'kept.ipynb');
    expect((await session.call('save_notebook', { path })).isError).toBe(false);
    expect(await ephemeral()).toBe(false);

    await session.call('disconnect_notebook', {});
    const after = await session.call('get_all_cells', {});
    expect(after.isError).toBe(true);
    expect(after.text).toBe(
      `No active notebook session (you disconnected it with disconnect_notebook). Reconnect with: connect_notebook(notebook_id="${notebookId}") — file: ${path}`,
    );
  });
});
