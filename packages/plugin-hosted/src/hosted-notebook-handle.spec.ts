import { type CellOutput, Clock, CoreError, type HostedUrlTarget, NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer, ManualClock } from '@nteract-mcp/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { HostedNotebookHandle } from './hosted-notebook-handle.js';
import { hostedNotebookId } from './hosted-notebook-id.js';
import { FakeJupyterServer } from './testing/fake-jupyter-server.js';

const url = 'http://127.0.0.1:8888/lab/tree/work/a.ipynb';
const signal = new AbortController().signal;

function setup() {
  const server = new FakeJupyterServer('s3cret');
  server.writeFile('work/a.ipynb', {
    cells: [{ id: 'c1', cell_type: 'markdown', metadata: {}, source: ['# Title'] }],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
    nbformat: 4,
    nbformat_minor: 5,
  });
  const clock = new ManualClock();
  const container = createTestContainer({
    plugins: [createHostedPlugin({ env: { JUPYTER_TOKEN: 's3cret' }, connector: server })],
  })
    .override(Clock, clock)
    .build();
  const resolver = container.get(NotebookTargetResolver);
  const target = resolver.resolve(url, { cwd: '/' }) as HostedUrlTarget;
  const backend = resolver.backendFor(target);
  const connect = async () => (await backend.connect(target, { peerLabel: 'agent', signal })) as HostedNotebookHandle;
  const reopen = async () => (await backend.reopen?.(target, { peerLabel: 'agent', signal })) as HostedNotebookHandle;
  return { server, clock, backend, target, connect, reopen };
}

async function rejection(promise: Promise<unknown>): Promise<CoreError> {
  try {
    await promise;
  } catch (error) {
    if (CoreError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe(HostedNotebookHandle, () => {
  it('loads the notebook through the contents API; identity is the URL, the id derived from it', async () => {
    const t = setup();
    const handle = await t.connect();
    expect(handle.notebookId).toBe(hostedNotebookId(url));
    expect(handle.notebookPath).toBe(url);
    expect(handle.daemonIncarnation).toBeUndefined();
    expect(handle.readiness()).toEqual({ document: 'ready', runtime: 'ready' });
    expect(await handle.listCells()).toMatchObject([{ id: 'c1', cellType: 'markdown', source: '# Title' }]);
    expect(t.server.opened.map((address) => address.token?.reveal())).toEqual(['s3cret']);
  });

  it('saves each edit through the contents API, and executions write nbformat outputs into the cell', async () => {
    const t = setup();
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'x = 41\nprint(x + 1)', cellType: 'code' });
    const result = await handle.executeCell(cell.id);
    expect(result).toMatchObject({
      status: 'ok',
      executionCount: 1,
      outputs: [{ output_type: 'stream', name: 'stdout', text: '42\n' }],
    });
    expect(result.kernelNotice).toBeUndefined();
    expect(await handle.getExecution(result.executionId)).toMatchObject({ status: 'ok', executionCount: 1 });
    await handle.close();
    const saved = t.server.file('work/a.ipynb');
    expect(saved?.cells[1]).toMatchObject({
      id: cell.id,
      cell_type: 'code',
      source: 'x = 41\nprint(x + 1)',
      execution_count: 1,
      outputs: [{ output_type: 'stream', name: 'stdout', text: '42\n' }],
    });
  });

  it('builds outputs as the daemon does: carriage returns applied, streams merged into new objects', async () => {
    const t = setup();
    const stream = (text: string) => ({ msgType: 'stream', content: { name: 'stdout', text } });
    t.server.scripted.set('progress()', [stream(' 10%\r'), stream(' 50%\r'), stream('100%\n'), stream('hello\rJ')]);
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'progress()', cellType: 'code' });
    const seen: CellOutput[] = [];
    const result = await handle.executeCell(cell.id, { onOutput: (output) => seen.push(output) });
    expect(result.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: '100%\nJello' }]);
    // Each output handed to onOutput kept the text it had then (none was changed afterwards).
    expect(seen.map((output) => output.text)).toEqual([' 10%\r', ' 50%\r', '100%\n', '100%\nJello']);
    await handle.close();
    expect(t.server.file('work/a.ipynb')?.cells[1]).toMatchObject({
      outputs: [{ output_type: 'stream', name: 'stdout', text: '100%\nJello' }],
    });
  });

  it('honours clear_output (with wait) and update_display_data by display id', async () => {
    const t = setup();
    const display = (msgType: string, text: string) => ({
      msgType,
      content: { data: { 'text/plain': text }, metadata: {}, transient: { display_id: 'd' } },
    });
    t.server.scripted.set('animate()', [
      { msgType: 'stream', content: { name: 'stdout', text: 'frame 1' } },
      { msgType: 'clear_output', content: { wait: true } },
      display('display_data', 'frame 2'),
      display('update_display_data', 'frame 3'),
    ]);
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'animate()', cellType: 'code' });
    const result = await handle.executeCell(cell.id);
    expect(result.outputs).toEqual([{ output_type: 'display_data', data: { 'text/plain': 'frame 3' }, metadata: {} }]);
  });

  it('answers an execution once its outputs are saved, so a server edit right after it is never overwritten', async () => {
    const t = setup();
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'x = 41\nprint(x + 1)', cellType: 'code' });
    t.server.holdSaves();
    let answered = false;
    const execution = handle.executeCell(cell.id).then((result) => {
      answered = true;
      return result;
    });
    await vi.waitFor(() => expect(t.server.heldSaves).toBe(1));
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    t.server.releaseSaves();
    expect(await execution).toMatchObject({ status: 'ok' });
    expect(t.server.file('work/a.ipynb')?.cells[1]).toMatchObject({ outputs: [{ text: '42\n' }] });
    t.server.writeFile('work/a.ipynb', { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 });
    expect((await rejection(handle.insertCell({ source: 'y = 1', cellType: 'code' }))).code).toBe(
      'file_changed_on_server',
    );
    expect(t.server.file('work/a.ipynb')?.cells).toEqual([]);
  });

  it('tells its change listeners of its own saved edits and of the outputs of its executions; nothing of a refused edit', async () => {
    const t = setup();
    const handle = await t.connect();
    const changes: unknown[] = [];
    handle.onDidChangeCells((change) => changes.push(change));
    const cell = await handle.insertCell({ source: 'print(1)', cellType: 'code' });
    await handle.updateCell('c1', { source: '# Renamed' });
    await handle.moveCell(cell.id, undefined);
    await handle.executeCell(cell.id);
    // A move to the start changes the place of both cells.
    expect(changes.slice(0, 4)).toEqual([
      { kind: 'inserted', cellId: cell.id },
      { kind: 'updated', cellId: 'c1' },
      { kind: 'moved', cellId: cell.id },
      { kind: 'moved', cellId: 'c1' },
    ]);
    // The execution: its cell cleared, its output, its end.
    expect(changes.slice(4)).toEqual([
      { kind: 'updated', cellId: cell.id },
      { kind: 'updated', cellId: cell.id },
      { kind: 'updated', cellId: cell.id },
    ]);
    const told = changes.length;
    t.server.writeFile('work/a.ipynb', { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 });
    await rejection(handle.deleteCell('c1'));
    expect(changes).toHaveLength(told);
  });

  it('refuses to overwrite a file changed on the server since it was loaded: nothing written, nothing lost', async () => {
    const t = setup();
    const handle = await t.connect();
    await handle.insertCell({ source: 'mine = 1', cellType: 'code' });
    const theirs = {
      cells: [{ id: 's1', cell_type: 'markdown', metadata: {}, source: 'edited on the server' }],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    };
    t.server.writeFile('work/a.ipynb', theirs);
    const cellsBefore = await handle.listCells();
    const error = await rejection(handle.insertCell({ source: 'again = 2', cellType: 'code' }));
    expect(error.kind).toBe('invalidRequest');
    expect(error.code).toBe('file_changed_on_server');
    expect(error.message).toBe(
      `${url} was changed on the Jupyter Server since it was loaded here, so this change was not saved and the server's file was left as it is. Reconnect with connect_notebook(url="${url}") to load the server's version, then make the change again.`,
    );
    expect(t.server.file('work/a.ipynb')).toEqual(theirs);
    expect(await handle.listCells()).toEqual(cellsBefore);
    // Reconnecting loads the server's version; edits then save again.
    await handle.close();
    const fresh = await t.connect();
    expect((await fresh.listCells()).map((cell) => cell.source)).toEqual(['edited on the server']);
    await fresh.insertCell({ source: 'after = 3', cellType: 'code' });
    expect(t.server.file('work/a.ipynb')?.cells.map((cell) => cell.source)).toEqual([
      'edited on the server',
      'after = 3',
    ]);
  });

  it('refuses the same way when the file was deleted on the server', async () => {
    const t = setup();
    const handle = await t.connect();
    t.server.files.delete('work/a.ipynb');
    const error = await rejection(handle.updateCell('c1', { source: 'changed' }));
    expect(error.code).toBe('file_changed_on_server');
    expect(error.message).toMatch(/ was deleted on the Jupyter Server since it was loaded here/);
    expect(t.server.files.has('work/a.ipynb')).toBe(false);
    expect((await handle.getCell('c1')).source).toBe('# Title');
  });

  it('reuses the server-side session of the path: a reconnect gets the same kernel with its state', async () => {
    const t = setup();
    const first = await t.connect();
    const cell = await first.insertCell({ source: 'x = 41', cellType: 'code' });
    await first.executeCell(cell.id);
    await first.close();
    const again = await t.reopen();
    expect(again.kernelId).toBe(first.kernelId);
    expect(t.server.startedSessions).toBe(1);
    const check = await again.insertCell({ source: 'print(x + 1)', cellType: 'code' });
    const result = await again.executeCell(check.id);
    expect(result.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: '42\n' }]);
    expect(result.kernelNotice).toBeUndefined();
  });

  it('runs scratch code in the session’s kernel: it sees and sets its variables; the notebook is neither changed nor saved; the kernel keeps it out of its history', async () => {
    const t = setup();
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'x = 41', cellType: 'code' });
    await handle.executeCell(cell.id);
    const changes: unknown[] = [];
    handle.onDidChangeCells((change) => changes.push(change));
    const before = t.server.files.get('work/a.ipynb')?.lastModified;

    const run = await handle.runScratch('y = 1\nprint(x + 1)');
    expect(run).toEqual({ status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text: '42\n' }] });
    const failed = await handle.runScratch('print(nope + 1)');
    expect(failed).toMatchObject({ status: 'error', outputs: [{ output_type: 'error', ename: 'NameError' }] });

    expect(t.server.executed.slice(-2)).toEqual([
      { code: 'y = 1\nprint(x + 1)', storeHistory: false },
      { code: 'print(nope + 1)', storeHistory: false },
    ]);
    expect(changes).toEqual([]);
    expect(t.server.files.get('work/a.ipynb')?.lastModified).toBe(before);
    expect((await handle.listCells()).map((c) => c.source)).toEqual(['# Title', 'x = 41']);
    // The scratch run set y in the kernel; the cell's next run counts on from 1, not from 3.
    const next = await handle.insertCell({ source: 'print(y + 1)', cellType: 'code' });
    expect(await handle.executeCell(next.id)).toMatchObject({ status: 'ok', executionCount: 2 });
  });

  it('a scratch run past its wait answers timeout with its outputs so far and goes on; kept as an execution it is read to its end', async () => {
    const t = setup();
    const handle = await t.connect();
    let release: () => void = () => undefined;
    t.server.held.set(
      'slow()',
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const stream = (text: string) => ({ msgType: 'stream', content: { name: 'stdout', text } });
    t.server.scripted.set('slow()', [stream('started\n'), stream('done\n')]);

    const waiting = handle.runScratch('slow()', { timeoutMs: 2_000 });
    await expect.poll(() => t.server.executed.length).toBe(1);
    await t.clock.advanceAndSettle(2_000);
    expect(await waiting).toEqual({
      status: 'timeout',
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'started\n' }],
    });

    const kept = await handle.startScratch('slow()');
    expect(kept).toMatchObject({ cellId: 'scratch', status: 'running' });
    release();
    await expect.poll(async () => (await handle.getExecution(kept.executionId)).status).toBe('ok');
    expect((await handle.getExecution(kept.executionId)).outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'started\ndone\n' },
    ]);
    expect((await handle.listCells()).map((c) => c.source)).toEqual(['# Title']);
  });

  it('a scratch run is where the agent hears its kernel was replaced, once', async () => {
    const t = setup();
    const first = await t.connect();
    await first.runScratch('x = 41');
    t.server.restart();
    const back = await t.reopen();
    const run = await back.runScratch('print(x + 1)');
    expect(run.kernelNotice).toMatch(/no longer had this notebook's kernel .*: this runs in a new kernel/);
    expect(run).toMatchObject({ status: 'error', outputs: [{ ename: 'NameError' }] });
    expect((await back.runScratch('x = 1')).kernelNotice).toBeUndefined();
    await back.close();
    expect((await rejection(back.runScratch('x = 2'))).kind).toBe('handleClosed');
  });

  it('after a server restart the notebook comes back on a new kernel, and the first execution says so once', async () => {
    const t = setup();
    const first = await t.connect();
    const cell = await first.insertCell({ source: 'x = 41', cellType: 'code' });
    await first.executeCell(cell.id);
    t.server.restart();
    expect(first.closedReason).toBe('disconnected');
    const back = await t.reopen();
    expect(back.kernelId).not.toBe(first.kernelId);
    expect(back.kernelNotice).toMatch(/no longer had this notebook's kernel .*: code now runs in a new kernel/);
    expect((await back.listCells()).map((c) => c.source)).toEqual(['# Title', 'x = 41']);
    const check = await back.insertCell({ source: 'print(x + 1)', cellType: 'code' });
    const result = await back.executeCell(check.id);
    expect(result.kernelNotice).toBe(
      "The Jupyter Server at http://127.0.0.1:8888/ no longer had this notebook's kernel (the server restarted, or the kernel was shut down, e.g. culled for idleness); the notebook was reloaded from the server: this runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.",
    );
    expect(result.status).toBe('error');
    expect(result.outputs).toMatchObject([{ output_type: 'error', ename: 'NameError' }]);
    expect((await back.executeCell(check.id)).kernelNotice).toBeUndefined();
    expect(back.kernelNotice).toBeUndefined();
  });

  it('notices a kernel restarted from elsewhere that says only starting (a classic notebook server), and says so once', async () => {
    const t = setup();
    const handle = await t.connect();
    const cell = await handle.insertCell({ source: 'x = 41', cellType: 'code' });
    expect((await handle.executeCell(cell.id)).kernelNotice).toBeUndefined();
    t.server.restartKernelElsewhere('work/a.ipynb');
    const check = await handle.insertCell({ source: 'print(x + 1)', cellType: 'code' });
    const result = await handle.executeCell(check.id);
    expect(result.kernelNotice).toMatch(/^The kernel on the Jupyter Server restarted .*: this runs in a new kernel/);
    expect(result.outputs).toMatchObject([{ output_type: 'error', ename: 'NameError' }]);
    expect((await handle.executeCell(check.id)).kernelNotice).toBeUndefined();
    // A restart the agent asked for is said by restart_kernel itself, not again here.
    await handle.restartKernel();
    expect((await handle.executeCell(check.id)).kernelNotice).toBeUndefined();
  });

  it('a connect that finds another kernel than the one seen for the URL carries the notice too; a first connect does not', async () => {
    const t = setup();
    const first = await t.connect();
    await first.close();
    t.server.sessions.clear();
    const second = await t.connect();
    const cell = await second.insertCell({ source: 'y = 1', cellType: 'code' });
    expect((await second.executeCell(cell.id)).kernelNotice).toMatch(/no longer had this notebook's kernel/);
  });

  it('closes once: closed on close(), disconnected when the server goes away; then every call rejects handleClosed', async () => {
    const t = setup();
    const closedByUs = await t.connect();
    const reasons: string[] = [];
    closedByUs.onDidClose((reason) => reasons.push(reason));
    await closedByUs.close();
    await closedByUs.close();
    expect(reasons).toEqual(['closed']);
    expect((await rejection(closedByUs.listCells())).kind).toBe('handleClosed');

    const lost = await t.connect();
    const lostReasons: string[] = [];
    lost.onDidClose((reason) => lostReasons.push(reason));
    t.server.stop();
    expect(lostReasons).toEqual(['disconnected']);
    expect(lost.isClosed).toBe(true);
    expect((await rejection(lost.insertCell({ source: '1', cellType: 'code' }))).kind).toBe('handleClosed');
    const late: string[] = [];
    lost.onDidClose((reason) => late.push(reason));
    expect(late).toEqual(['disconnected']);
  });

  it('honours idempotency keys within its life: a repeated key returns the first result without applying again', async () => {
    const t = setup();
    const handle = await t.connect();
    const a = await handle.insertCell({ source: 'x = 1', cellType: 'code' }, { idempotencyKey: 'k1' });
    const b = await handle.insertCell({ source: 'x = 1', cellType: 'code' }, { idempotencyKey: 'k1' });
    expect(b).toEqual(a);
    expect(await handle.listCells()).toHaveLength(2);
    const run1 = await handle.executeCell(a.id, { idempotencyKey: 'k2' });
    const run2 = await handle.executeCell(a.id, { idempotencyKey: 'k2' });
    expect(run2.executionId).toBe(run1.executionId);
  });

  it('gives each cell a content version and refuses a change against an older one, changing nothing', async () => {
    const t = setup();
    const handle = await t.connect();
    const made = await handle.insertCell({ source: 'x = 1', cellType: 'code' });
    const edited = await handle.updateCell(made.id, { source: 'x = 2' }, { expectedVersion: made.version });
    expect(edited.version).not.toBe(made.version);
    for (const attempt of [
      handle.updateCell(made.id, { source: 'x = 3' }, { expectedVersion: made.version }),
      handle.deleteCell(made.id, { expectedVersion: made.version }),
      handle.clearOutputs(made.id, { expectedVersion: made.version }),
      handle.executeCell(made.id, { expectedVersion: made.version }),
    ]) {
      const refused = await rejection(attempt);
      expect(refused.kind).toBe('staleCell');
      expect(refused.message).toContain('Its source now:\nx = 2');
    }
    expect((await handle.getCell(made.id)).source).toBe('x = 2');
  });

  it('says clearly when the server has no such notebook, and when it does not answer', async () => {
    const t = setup();
    t.server.files.delete('work/a.ipynb');
    const missing = await rejection(t.connect());
    expect(missing.kind).toBe('notebookUnavailable');
    expect(missing.message).toBe(
      `The Jupyter Server at http://127.0.0.1:8888/ has no notebook work/a.ipynb (${url}). Create it with create_notebook(url=…) or check the path.`,
    );
    t.server.stop();
    expect((await rejection(t.connect())).kind).toBe('daemonUnavailable');
  });
});
