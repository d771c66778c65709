// A daemon that hangs (SIGSTOP) under an agent's edit, as a user meets it: the shipped bins, a
// fresh HOME, the daemon auto-started. The agent's edit must never be answered as a failure when
// the daemon may still do it, and an agent that sends the same edit again (its client gave up on
// the first) must not get a second cell.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNotebookFile, startUserSession, type UserSession, waitFor } from './support/index.js';

let session: UserSession | undefined;

afterEach(async () => {
  await session?.stop();
  session = undefined;
});

/** The live cells whose source is `source`. */
async function countLive(s: UserSession, source: string): Promise<number> {
  const listed = await s.call('get_all_cells', { format: 'json' });
  const cells = listed.json?.cells as { source: string }[] | undefined;
  if (!cells) throw new Error(`get_all_cells: ${listed.text}`);
  return cells.filter((cell) => cell.source === source).length;
}

describe('a daemon that stalls under an edit', () => {
  it('makes one cell for an edit the agent sends again while the daemon hangs, and answers neither as a failure', async () => {
    session = await startUserSession({ requestTimeoutMs: 120_000 });
    const s = session;
    const created = await s.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    const path = join(s.dirs.project, 'stalled.ipynb');
    expect((await s.call('save_notebook', { path })).isError).toBe(false);

    const source = `# stalled edit ${Date.now()}`;
    const stall = await s.faults.stallDaemon(25_000);
    const first = s.send('create_cell', { source });
    // The child has found the daemon gone under the call (it waits for the session to come back):
    // the moment an agent whose client gave up would send the edit again.
    await waitFor(
      'the child to find the session lost under the call',
      () => s.stderr().includes('the session was lost under a call'),
      { timeoutMs: 60_000 },
    );
    const again = s.send('create_cell', { source });
    const answers = await Promise.all([first, again]);
    for (const answer of answers) {
      if (!answer.ok) throw answer.error;
      // Done, or "outcome unknown", or (the retry found no session yet) a refusal that did nothing:
      // never an error that says the edit did not happen when it may have.
      if (answer.outcome.isError) {
        expect(answer.outcome.text).toMatch(/^Outcome unknown: |\[nteract\] This create_cell did nothing: /);
      }
      expect(answer.outcome.text).not.toMatch(/connection is closed/);
    }
    stall.resume();
    await waitFor(
      'the session to be active again',
      async () => {
        const status = await s.call('session_status');
        return (status.json?.active as { notebook_id?: string } | null)?.notebook_id === created.json?.notebook_id;
      },
      { timeoutMs: 90_000 },
    );
    // The agent sends it once more if no answer said it was done: still one cell.
    if (answers.every((answer) => answer.ok && answer.outcome.isError)) {
      const last = await s.call('create_cell', { source });
      expect(last.isError, last.text).toBe(false);
    }
    expect(await countLive(s, source)).toBe(1);
    await waitFor(
      'the file to hold the cell once',
      () => readNotebookFile(path).filter((cell) => cell.source === source).length === 1,
      { timeoutMs: 30_000 },
    );
  }, 240_000);
});
