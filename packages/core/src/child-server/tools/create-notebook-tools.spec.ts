import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { PNG } from 'pngjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeExecutor, FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import { progressIntervalMs } from '../executions/coalesce-progress.js';
import { resultBytes } from './tool-result-budget.js';

describe('notebook tools', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  /** A harness with a fresh notebook created and active; returns its handle. */
  async function withNotebook(): Promise<FakeNotebookHandle> {
    harness = await startChildServerTestHarness();
    return harness.createNotebook();
  }

  it('creates a cell and runs it in one call, returning the output text', async () => {
    await withNotebook();
    const created = await harness.callJson('create_cell', { source: 'print("hi")', and_run: true });
    expect(created).toEqual({
      cell_id: 'cell-1',
      cell_type: 'code',
      execution_id: expect.any(String),
      notebook_id: harness.slot.active?.handle.notebookId,
      status: 'done',
      execution_count: 1,
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'out: print("hi")\n' }],
    });
    const executed = await harness.callJson('execute_cell', { cell_id: 'cell-1', timeout_secs: '5' });
    expect(executed).toMatchObject({ cell_id: 'cell-1', status: 'done', execution_count: 2 });
    expect(executed.execution_id).not.toBe(created.execution_id);
  });

  it('says when a run went to a new kernel and why, in the result of that run only', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    handle.nextKernelNotice = 'The kernel exited unexpectedly (SIGKILL): this runs in a new kernel, …';
    const rerun = await harness.callJson('execute_cell', { cell_id: 'cell-1' });
    expect(rerun.kernel_notice).toBe('The kernel exited unexpectedly (SIGKILL): this runs in a new kernel, …');
    const results = await harness.callJson('get_results', { execution_id: rerun.execution_id as string });
    expect(results.kernel_notice).toBe(rerun.kernel_notice);
    expect((await harness.callJson('execute_cell', { cell_id: 'cell-1' })).kernel_notice).toBeUndefined();
  });

  it('reads cells one by one and all at once, in summary, json and rich formats', async () => {
    await withNotebook();
    await harness.callJson('create_cell', { source: 'x = 1\ny = 2', and_run: true });
    await harness.callJson('create_cell', { source: '# Notes', cell_type: 'markdown' });
    await harness.callJson('create_cell', { source: 'raise boom', and_run: true });

    expect(await harness.callJson('get_cell', { cell_id: 'cell-1' })).toEqual({
      cell_id: 'cell-1',
      cell_type: 'code',
      source: 'x = 1\ny = 2',
      execution_count: 1,
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'out: x = 1\ny = 2\n' }],
    });
    expect(resultText(await harness.call('get_all_cells'))).toBe(
      [
        '[0] cell-1 code (exec 1, 1 output): x = 1 …',
        '[1] cell-2 markdown: # Notes',
        '[2] cell-3 code (exec 2, 1 output, error): raise boom',
      ].join('\n'),
    );
    expect(resultText(await harness.call('get_all_cells', { start: 1, count: 1, preview_chars: 3 }))).toBe(
      '[1] cell-2 markdown: # N…\n(cells 1–1 of 3)',
    );
    const json = await harness.callJson('get_all_cells', { format: 'json', start: 2, include_outputs: true });
    expect(json).toMatchObject({ total_cells: 3, cells: [{ cell_id: 'cell-3', index: 2 }] });
    const [errorCell] = json.cells as { outputs: Record<string, string>[] }[];
    // The traceback is shown without terminal colour codes.
    expect(errorCell?.outputs[0]).toEqual({
      output_type: 'error',
      ename: 'RuntimeError',
      evalue: 'boom',
      traceback: 'RuntimeError: boom',
    });
    const rich = resultText(await harness.call('get_all_cells', { format: 'rich' }));
    expect(rich).toContain('── [0] cell-1 code [1]\nx = 1\ny = 2\n── outputs\nout: x = 1\ny = 2');
    expect(rich).toContain('RuntimeError: boom');
  });

  it('edits, moves and deletes cells, and says which cell id is unknown as invalid params', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'a' });
    await harness.callJson('create_cell', { source: 'b' });
    await harness.callJson('create_cell', { source: 'c', index: 0 });
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['c', 'a', 'b']);

    expect(await harness.callJson('set_cell', { cell_id: 'cell-1', source: 'A', and_run: true })).toMatchObject({
      cell_id: 'cell-1',
      updated: true,
      status: 'done',
      outputs: [{ text: 'out: A\n' }],
    });
    expect(await harness.callJson('set_cell', { cell_id: 'cell-2', cell_type: 'markdown', and_run: true })).toEqual({
      cell_id: 'cell-2',
      cell_type: 'markdown',
      updated: true,
      note: 'Only code cells run; this markdown cell was not executed.',
    });
    expect(await harness.callJson('move_cell', { cell_id: 'cell-3', after_cell_id: 'cell-2' })).toEqual({
      moved: true,
      cell_id: 'cell-3',
      after_cell_id: 'cell-2',
    });
    await harness.callJson('move_cell', { cell_id: 'cell-2', after_cell_id: null });
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual(['cell-2', 'cell-1', 'cell-3']);
    expect(await harness.callJson('delete_cell', { cell_id: 'cell-1' })).toEqual({ deleted: true, cell_id: 'cell-1' });
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual(['cell-2', 'cell-3']);

    expect(await toolError(harness.call('get_cell', { cell_id: 'cell-1' }))).toBe('Cell not found: cell-1');
    expect(await toolError(harness.call('delete_cell', { cell_id: 'nope' }))).toBe('Cell not found: nope');
    expect(await toolError(harness.call('execute_cell', { cell_id: 'nope' }))).toBe('Cell not found: nope');
    expect(await toolError(harness.call('set_cell', { cell_id: 'cell-2' }))).toBe(
      'Nothing to change: give source, cell_type, or and_run=true.',
    );
  });

  it('applies a call repeated with the same idempotency key once, each of its mutations included', async () => {
    const handle = await withNotebook();
    const first = await harness.callJson('create_cell', { source: 'n += 1', and_run: true }, 'call-1');
    const replay = await harness.callJson('create_cell', { source: 'n += 1', and_run: true }, 'call-1');
    expect(replay).toEqual(first);
    expect(await handle.listCells()).toHaveLength(1);
    expect(handle.calls.filter((call) => call.startsWith('insertCell'))).toHaveLength(2);
    expect((await handle.getCell('cell-1')).executionCount).toBe(1);

    const other = await harness.callJson('create_cell', { source: 'n += 1' }, 'call-2');
    expect(other.cell_id).toBe('cell-2');
    const run = await harness.callJson('execute_cell', { cell_id: 'cell-2' }, 'call-3');
    const rerun = await harness.callJson('execute_cell', { cell_id: 'cell-2' }, 'call-3');
    expect(rerun.execution_id).toBe(run.execution_id);
    expect((await handle.getCell('cell-2')).executionCount).toBe(2);
  });

  it('reports progress while a cell runs when the request asks for it', async () => {
    await withNotebook();
    await harness.callJson('create_cell', { source: 'print(1)' });
    const progress: Progress[] = [];
    const result = await harness.call('execute_cell', { cell_id: 'cell-1' }, { onProgress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(progress).toEqual([{ progress: 1, message: 'cell cell-1: 1 output so far' }]);
  });

  it('returns partial outputs and an execution id on timeout, and get_results works without an active session', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'sleep(100)' });
    const started = await harness.callJson('execute_cell', { cell_id: 'cell-1', timeout_secs: 1 });
    const executionId = String(started.execution_id);
    expect(started).toMatchObject({
      status: 'running',
      outputs: [{ text: 'out: sleep(100)\n' }],
      hint: `Still running; outputs so far are shown. Call get_results(execution_id="${executionId}") for the rest.`,
    });
    expect(handle.calls).toContain('executeCell:cell-1');

    // Parked: the notebook's own handle answers, with the finished state.
    await harness.callJson('connect_notebook', { path: 'other.ipynb' });
    handle.completeExecution(executionId, {
      status: 'ok',
      outputs: [{ output_type: 'execute_result', data: { 'text/plain': '42', 'text/html': '<b>42</b>' } }],
    });
    expect(await harness.callJson('get_results', { execution_id: executionId })).toEqual({
      cell_id: 'cell-1',
      execution_id: executionId,
      notebook_id: handle.notebookId,
      status: 'done',
      execution_count: 1,
      outputs: [
        { output_type: 'stream', name: 'stdout', text: 'out: sleep(100)\n' },
        { output_type: 'execute_result', mime_type: 'text/html', text: '**42**', other_mime_types: ['text/plain'] },
      ],
    });

    // Disconnected everything: the last known state is returned.
    await harness.call('disconnect_notebook', { notebook_id: handle.notebookId });
    await harness.call('disconnect_notebook');
    expect(harness.slot.active).toBeUndefined();
    expect(await harness.callJson('get_results', { execution_id: executionId })).toMatchObject({
      execution_id: executionId,
      status: 'done',
      note: 'Last known state: the notebook of this execution is not connected now.',
    });
    const unknown = 'not-an-execution';
    expect(await toolError(harness.call('get_results', { execution_id: unknown }))).toBe(
      `Execution not found: ${unknown}. It may have been evicted and no durable result record was found.`,
    );
  });

  it('asks the active notebook about an execution this child did not start', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'print(1)' });
    const run = await handle.executeCell('cell-1');
    expect(await harness.callJson('get_results', { execution_id: run.executionId })).toMatchObject({
      execution_id: run.executionId,
      status: 'done',
      outputs: [{ text: 'out: print(1)\n' }],
    });
  });

  it('runs all code cells in order and stops at the first error', async () => {
    await withNotebook();
    await harness.callJson('create_cell', { source: 'a = 1' });
    await harness.callJson('create_cell', { source: '# doc', cell_type: 'markdown' });
    await harness.callJson('create_cell', { source: 'raise bad' });
    await harness.callJson('create_cell', { source: 'b = 2' });
    const result = await harness.callJson('run_all_cells');
    expect(result).toMatchObject({
      status: 'error',
      executions: [
        { cell_id: 'cell-1', status: 'done' },
        { cell_id: 'cell-3', status: 'error' },
      ],
      not_run: ['cell-4'],
    });
    const queued = await harness.callJson('run_all_cells', { wait: false });
    expect(queued).toMatchObject({ status: 'queued' });
    expect((queued.executions as unknown[]).length).toBe(3);
  });

  it('gates edits and execution on readiness with distinct errors, while reads work', async () => {
    harness = await startChildServerTestHarness({
      daemon: { readiness: { document: 'ready', runtime: 'unavailable', reason: 'no kernelspec with ipykernel' } },
    });
    await harness.callJson('connect_notebook', { path: 'a.ipynb' });
    await harness.callJson('create_cell', { source: 'x' });
    expect((await harness.callJson('get_cell', { cell_id: 'cell-1' })).source).toBe('x');
    expect(await toolError(harness.call('execute_cell', { cell_id: 'cell-1' }))).toBe(
      "The notebook's runtime is unavailable: no kernelspec with ipykernel",
    );
    expect(await toolError(harness.call('create_cell', { source: 'y', and_run: true }))).toContain(
      'runtime is unavailable',
    );
    expect(await toolError(harness.call('restart_kernel'))).toContain('runtime is unavailable');
    // Refused before anything changed: the second cell was not inserted.
    expect(resultText(await harness.call('get_all_cells'))).toBe('[0] cell-1 code: x');
  });

  it('says when an interrupt found nothing running, and refuses to call interrupted what still runs', async () => {
    const handle = await withNotebook();
    handle.interruptOutcome = 'nothing_running';
    expect(await harness.callJson('interrupt_kernel')).toEqual({ interrupted: false, note: 'Nothing was running.' });
    handle.interruptOutcome = 'still_running';
    expect(await toolError(harness.call('interrupt_kernel'))).toMatch(
      /^Not interrupted: the kernel is still running .* restart_kernel stops it/,
    );
  });

  it('interrupts and restarts the kernel', async () => {
    const handle = await withNotebook();
    expect(await harness.callJson('interrupt_kernel')).toEqual({ interrupted: true });
    expect(await harness.callJson('restart_kernel')).toEqual({ restarted: true });
    expect([handle.interruptCount, handle.kernelRestartCount]).toEqual([1, 1]);
  });

  it('does not pass off a result as the active notebook when the session changed during the call', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'print(1)' });
    // The session is dropped while the execution is in flight.
    const execute = handle.executeCell.bind(handle);
    handle.executeCell = async (cellId, options) => {
      const result = await execute(cellId, options);
      harness.slot.disconnect();
      return result;
    };
    const text = await toolError(harness.call('execute_cell', { cell_id: 'cell-1' }));
    expect(text).toMatch(/^The active notebook changed while this call was running/);
    const executionId = /get_results\(execution_id="([^"]+)"\)/.exec(text)?.[1];
    expect(executionId).toBeDefined();
    expect(await harness.callJson('get_results', { execution_id: executionId })).toMatchObject({ status: 'done' });
  });

  describe('with results over the budget', () => {
    const budget = 200_000;

    async function withLargeCells(sources: readonly string[]): Promise<void> {
      harness = await startChildServerTestHarness({ server: { resultBudgetBytes: budget } });
      await harness.callJson('create_notebook');
      for (const source of sources) await harness.callJson('create_cell', { source, and_run: true });
    }

    it("lists in 'json' the cells that fit, says which were cut and where to start next", async () => {
      await withLargeCells(['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(40_000)));
      // With a count the window goes up to the limit of one tool result (without, a default answer's bound).
      const result = await harness.call('get_all_cells', { format: 'json', count: 5 });
      expect(resultBytes(result)).toBeLessThanOrEqual(budget);
      const first = JSON.parse(resultText(result));
      expect(first.total_cells).toBe(5);
      expect(first.truncated).toEqual({
        shown_cells: 4,
        next_start: 4,
        note: 'Cut to fit the 0.19 MiB limit of one tool result: cells 4–4 are not shown. Read them with get_all_cells(format="json", start=4), or one at a time with get_cell(cell_id=...).',
      });
      expect(first.cells.map((cell: { source: string }) => cell.source)).toEqual(
        ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(40_000)),
      );
      const rest = await harness.callJson('get_all_cells', { format: 'json', start: first.truncated.next_start });
      expect(rest.truncated).toBeUndefined();
      expect((rest.cells as { source: string }[]).map((cell) => cell.source)).toEqual(['e'.repeat(40_000)]);
    });

    it("stops 'rich' text at the budget with a last line that says how to read the rest", async () => {
      await withLargeCells(['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(40_000)));
      const result = await harness.call('get_all_cells', { format: 'rich', count: 5 });
      expect(resultBytes(result)).toBeLessThanOrEqual(budget);
      const text = resultText(result);
      expect(text).toContain('d'.repeat(40_000));
      expect(text).not.toContain('e'.repeat(100));
      expect(text.split('\n').at(-1)).toBe(
        '── … cells 4–4 are not shown: one tool result is limited to 0.19 MiB. Read them with get_all_cells(format="rich", start=4), or one at a time with get_cell(cell_id=...).',
      );
    });

    it('answers about 48 KiB in every format without a count, whatever the notebook size, and pages to every cell', async () => {
      harness = await startChildServerTestHarness();
      const handle = await harness.createNotebook();
      const total = 3000;
      for (let i = 0; i < total; i += 1) handle.insertAsPeer('seed', `values_${i} = ${'x'.repeat(120)}`);
      const indexOf = {
        summary: (text: string) => [...text.matchAll(/^\[(\d+)\] /gm)].map((match) => Number(match[1])),
        rich: (text: string) => [...text.matchAll(/^── \[(\d+)\] /gm)].map((match) => Number(match[1])),
        json: (text: string) => (JSON.parse(text).cells as { index: number }[]).map((cell) => cell.index),
      };
      const nextOf = {
        summary: (text: string) => /get_all_cells\(start=(\d+)\) lists the next\)$/.exec(text)?.[1],
        rich: (text: string) => /start=(\d+)\), or one at a time with get_cell\(cell_id=\.\.\.\)\.$/.exec(text)?.[1],
        json: (text: string) => JSON.parse(text).truncated?.next_start,
      };
      for (const format of ['summary', 'json', 'rich'] as const) {
        const seen: number[] = [];
        let start = 0;
        for (let page = 0; page < total; page += 1) {
          const result = await harness.call('get_all_cells', { format, ...(start > 0 ? { start } : {}) });
          expect(resultBytes(result)).toBeLessThanOrEqual(64 * 1024);
          const text = resultText(result);
          seen.push(...indexOf[format](text));
          const next = nextOf[format](text);
          if (next === undefined) break;
          expect(Number(next)).toBe(seen.length);
          start = Number(next);
        }
        expect(seen).toEqual(Array.from({ length: total }, (_, i) => i));
      }
      const note = JSON.parse(resultText(await harness.call('get_all_cells', { format: 'json' }))).truncated.note;
      expect(note).toMatch(
        /^Cut without count, one answer lists about 48 KiB of cells \(give count for more at once\): cells \d+–2999 are not shown\. Read them with get_all_cells\(format="json", start=\d+\)/,
      );
      // A count still asks for more at once, up to the limit of one tool result.
      expect(
        JSON.parse(resultText(await harness.call('get_all_cells', { format: 'json', count: total }))).cells,
      ).toHaveLength(total);
    });

    it('cuts one cell larger than the budget, its output in the middle, and pages the outputs through within it', async () => {
      await withLargeCells(['x'.repeat(250_000)]);
      const budgetCut = /\n… \[\d+ more characters not shown: one tool result is limited to 0\.19 MiB\]$/;
      const shown = await harness.call('get_cell', { cell_id: 'cell-1' });
      expect(resultBytes(shown)).toBeLessThanOrEqual(budget);
      const cell = JSON.parse(resultText(shown));
      expect(cell.source).toMatch(budgetCut);
      const text: string = cell.outputs[0].text;
      const marker =
        /\n… \[(\d+) characters \(0 line breaks\) cut here; read them with get_cell\(cell_id="cell-1", offset=(\d+)\)\] …\n/;
      const [, cutChars, offset] = marker.exec(text) ?? [];
      expect(text.startsWith(`out: ${'x'.repeat(1000)}`)).toBe(true);
      expect(text.endsWith(`${'x'.repeat(1000)}\n`)).toBe(true);
      expect(text.length).toBeLessThan(6200);
      expect(Number(cutChars)).toBeGreaterThan(244_000);
      const atCut = await harness.callJson('get_cell', { cell_id: 'cell-1', offset: Number(offset), length: 10 });
      expect(atCut.outputs_page).toMatchObject({ offset: Number(offset), length: 10, text: 'x'.repeat(10) });

      const whole = `── output 1 of 1: stream stdout\nout: ${'x'.repeat(250_000)}\n`;
      const pageThrough = async (tool: string, args: Record<string, unknown>): Promise<string> => {
        let read = '';
        let at: number | undefined = 0;
        while (at !== undefined) {
          const page = await harness.call(tool, { ...args, offset: at, length: 10_000_000 });
          expect(resultBytes(page)).toBeLessThanOrEqual(budget);
          const { outputs_page } = JSON.parse(resultText(page));
          expect(outputs_page.total_chars).toBe(whole.length);
          if (outputs_page.next_offset !== undefined) {
            expect(outputs_page.note).toMatch(/^Shortened to \d+ characters to fit the limit of one tool result/);
          }
          read += outputs_page.text;
          at = outputs_page.next_offset;
        }
        return read;
      };
      expect(await pageThrough('get_cell', { cell_id: 'cell-1' })).toBe(whole);
      const executed = await harness.callJson('execute_cell', { cell_id: 'cell-1' });
      expect(executed.outputs).toEqual([
        expect.objectContaining({
          text: expect.stringContaining(`get_results(execution_id="${executed.execution_id}", offset=`),
        }),
      ]);
      // Pages read where the outputs are, and paged here from the outputs an older daemon answers.
      const handle = harness.daemon?.handles.at(-1) as FakeNotebookHandle;
      for (const answersPages of [true, false]) {
        handle.answersPages = answersPages;
        const before = handle.calls.length;
        expect(await pageThrough('get_results', { execution_id: executed.execution_id })).toBe(whole);
        const wholeReads = handle.calls.slice(before).filter((call) => call.startsWith('getExecution:'));
        expect(wholeReads.length > 0).toBe(!answersPages);
        expect(
          await toolError(harness.call('get_results', { execution_id: executed.execution_id, offset: 10_000_000 })),
        ).toBe(
          `offset 10000000 is past the end of the outputs (${whole.length} characters); give an offset from 0 to ${whole.length}.`,
        );
      }
    });
  });
});

describe('notebook tools: outputs as the agent sees them', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  /** The JSON text of a result that may carry images after it. */
  const firstText = (result: { content: unknown[] }): string => {
    const [first] = result.content as { type: string; text?: string }[];
    if (first?.type !== 'text' || first.text === undefined) throw new Error('the result has no leading text item');
    return first.text;
  };

  const tinyPng = (() => {
    const png = new PNG({ width: 40, height: 30 });
    png.data.fill(120);
    return PNG.sync.write(png).toString('base64');
  })();

  /** Plots, HTML and many displays, by source. */
  const richExecutor: FakeExecutor = (cell) => {
    if (cell.source === 'plot') {
      return {
        status: 'ok',
        outputs: [
          { output_type: 'display_data', data: { 'image/png': tinyPng, 'text/plain': '<Figure size 40x30>' } },
          { output_type: 'execute_result', data: { 'text/html': '<b>bold</b>', 'text/plain': '<HTML>' } },
        ],
      };
    }
    if (cell.source === 'many') {
      return {
        status: 'ok',
        outputs: Array.from({ length: 300 }, (_, n) => ({
          output_type: 'display_data',
          data: { 'text/plain': `${n}` },
        })),
      };
    }
    return { status: 'ok', outputs: [] };
  };

  async function withRichNotebook(): Promise<void> {
    harness = await startChildServerTestHarness({ daemon: { executor: richExecutor } });
    await harness.callJson('create_notebook');
  }

  it('returns images as image content and HTML as Markdown from every tool that shows outputs, unless images=false', async () => {
    await withRichNotebook();
    const created = await harness.call('create_cell', { source: 'plot', and_run: true });
    const check = (
      result: Awaited<ReturnType<typeof harness.call>>,
      outputs: (value: Record<string, unknown>) => unknown,
    ) => {
      const content = result.content as { type: string; data?: string; mimeType?: string }[];
      expect(content.map((item) => item.type)).toEqual(['text', 'image']);
      expect(content[1]).toEqual({ type: 'image', data: tinyPng, mimeType: 'image/png' });
      expect(outputs(JSON.parse(firstText(result)))).toEqual([
        {
          output_type: 'display_data',
          mime_type: 'text/plain',
          text: '<Figure size 40x30>',
          image: { mime_type: 'image/png', width: 40, height: 30, content_index: 1 },
        },
        { output_type: 'execute_result', mime_type: 'text/html', text: '**bold**', other_mime_types: ['text/plain'] },
      ]);
    };
    const own = (value: Record<string, unknown>) => value.outputs;
    check(created, own);
    const executionId = JSON.parse(firstText(created)).execution_id;
    check(await harness.call('execute_cell', { cell_id: 'cell-1' }), own);
    check(await harness.call('set_cell', { cell_id: 'cell-1', and_run: true }), own);
    check(await harness.call('get_cell', { cell_id: 'cell-1' }), own);
    check(await harness.call('get_results', { execution_id: executionId }), own);
    check(
      await harness.call('get_all_cells', { format: 'json' }),
      (value) => (value.cells as { outputs: unknown }[])[0]?.outputs,
    );
    check(await harness.call('run_all_cells', {}), (value) => (value.executions as { outputs: unknown }[])[0]?.outputs);
    const rich = await harness.call('get_all_cells', { format: 'rich' });
    expect(rich.content.map((item) => item.type)).toEqual(['text', 'image']);
    expect(firstText(rich)).toContain(
      '<Figure size 40x30>\n[image/png 40×30: image content item 1]\n**bold** [also text/plain]',
    );

    const off = await harness.call('execute_cell', { cell_id: 'cell-1', images: false });
    expect(off.content.map((item) => item.type)).toEqual(['text']);
    expect(JSON.parse(firstText(off)).outputs[0].image.not_shown).toMatch(/images are off for this call/);
  });

  it('caps 300 displays with a summary line, pages them, and coalesces their progress', async () => {
    await withRichNotebook();
    await harness.callJson('create_cell', { source: 'many' });
    const progress: Progress[] = [];
    const started = Date.now();
    const run = JSON.parse(
      firstText(await harness.call('execute_cell', { cell_id: 'cell-1' }, { onProgress: (p) => progress.push(p) })),
    );
    const elapsed = Date.now() - started;
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(1 + Math.floor(elapsed / progressIntervalMs));
    const outputs = run.outputs as { output_type: string; text?: string; summary?: string }[];
    expect(outputs).toHaveLength(51);
    const summary = outputs[40]?.summary ?? '';
    expect(summary).toMatch(/^250 outputs not shown \(outputs 41–290 of 300: 250 display_data; 690 characters\)/);
    const offset = Number(/offset=(\d+)\)\.$/.exec(summary)?.[1]);
    const page = await harness.callJson('get_results', {
      execution_id: run.execution_id as string,
      offset,
      length: 48,
    });
    expect((page.outputs_page as { text: string }).text).toBe('── output 41 of 300: display_data text/plain\n40\n');
    expect(page).toMatchObject({ status: 'done', execution_id: run.execution_id });
    expect(page.outputs).toBeUndefined();
  });
});
