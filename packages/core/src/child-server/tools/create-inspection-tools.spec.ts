import { ManualClock } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotebookCell } from '../../ports/notebook-handle.js';
import type { FakeExecutor, FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  testExecutor,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import type { VariableEntry } from '../inspection/parse-inspection-answer.js';

/** The settings an inspection program carries: from a Python source's JSON, or an R source's `list(...)`. */
function settingsOf(source: string): Record<string, unknown> {
  const python = /'settings_json': (".*")\}\)$/.exec(source);
  if (python) return JSON.parse(JSON.parse(python[1] as string) as string) as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const [, key, text, number] of source.matchAll(/(\w+) = (?:"((?:[^"\\]|\\.)*)"|(\d+)L)/g)) {
    settings[key as string] =
      number !== undefined
        ? Number(number)
        : (text as string)
            .replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
            .replace(/\\(.)/g, '$1');
  }
  return settings;
}

/** A kernel namespace the fake answers inspection programs from. */
class FakeKernel {
  public variables: VariableEntry[] = [
    { name: 'count', type: 'int', repr: '3' },
    { name: 'frame', type: 'DataFrame', repr: '   a\n0  1', shape: [1, 1], columns: [{ name: 'a', dtype: 'int64' }] },
    { name: 'items', type: 'list', repr: '[1, 2, 3]', length: 3 },
  ];
  /** `running`: the kernel is busy; the scratch run is still waiting when the wait ends. */
  public state: 'idle' | 'running' = 'idle';
  public readonly programs: { readonly source: string; readonly settings: Record<string, unknown> }[] = [];

  public readonly executor: FakeExecutor = (cell: NotebookCell) => {
    if (cell.id !== 'scratch') return testExecutor(cell);
    if (this.state === 'running') return { status: 'running', outputs: [] };
    const settings = settingsOf(cell.source);
    this.programs.push({ source: cell.source, settings });
    const text = `${String(settings.marker)}${JSON.stringify(this.answer(settings))}\n`;
    return { status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text }] };
  };

  private answer(settings: Record<string, unknown>): Record<string, unknown> {
    const common = { language: 'python', memory: { rss_bytes: 52_428_800, source: 'psutil' }, execution_count: 7 };
    if (settings.kind === 'inspect') {
      const entry = this.variables.find((variable) => variable.name === settings.name);
      if (entry) return { ...common, entry: { ...entry, size_bytes: 120 } };
      return { ...common, missing: true, names: this.variables.map((variable) => variable.name) };
    }
    const filter = String(settings.filter).toLowerCase();
    const names = this.variables.filter((variable) => variable.name.toLowerCase().includes(filter));
    const start = Number(settings.start);
    return { ...common, total: names.length, entries: names.slice(start, start + Number(settings.count)) };
  }
}

describe('inspection tools', () => {
  let harness: ChildServerTestHarness;
  let kernel: FakeKernel;
  let clock: ManualClock;
  afterEach(async () => {
    await harness.close();
  });

  async function withNotebook(): Promise<FakeNotebookHandle> {
    kernel = new FakeKernel();
    clock = new ManualClock();
    harness = await startChildServerTestHarness({
      clock,
      daemon: {
        executor: kernel.executor,
        kernels: [
          { name: 'python3', displayName: 'Python 3', language: 'python', location: undefined, available: true },
          { name: 'deno', displayName: 'Deno', language: 'typescript', location: undefined, available: true },
          { name: 'mine', displayName: 'My R', language: 'R', location: undefined, available: true },
        ],
      },
    });
    return harness.createNotebook();
  }

  it('list_variables: lists the kernel’s answer with one scratch run, labelled, and changes no cell', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'count = 3', and_run: true });
    const before = await harness.callJson('get_all_cells', { format: 'json' });
    const listed = await harness.callJson('list_variables');
    expect(listed).toMatchObject({
      notebook_id: handle.notebookId,
      language: 'python',
      execution_count: 7,
      total: 3,
      start: 0,
      kernel_memory: { rss_bytes: 52_428_800, mib: 50, source: 'psutil' },
    });
    expect((listed.variables as VariableEntry[]).map((entry) => entry.name)).toEqual(['count', 'frame', 'items']);
    expect(listed.taken_at).toBe(new Date(clock.now()).toISOString());
    expect(listed).not.toHaveProperty('truncated');
    expect(handle.scratchRuns).toHaveLength(1);
    expect(await harness.callJson('get_all_cells', { format: 'json' })).toEqual(before);
  });

  it('list_variables: a glob or a substring filter, pages with start, and bounds an answer', async () => {
    await withNotebook();
    await harness.callJson('list_variables', { filter: 'co*' });
    await harness.callJson('list_variables', { filter: ' IT ' });
    expect(kernel.programs.map((program) => [program.settings.filter_mode, program.settings.filter])).toEqual([
      ['glob', 'co*'],
      ['substring', 'IT'],
    ]);
    kernel.variables = Array.from({ length: 40 }, (_, index) => ({
      name: `v${String(index).padStart(2, '0')}`,
      type: 'str',
      repr: 'r'.repeat(3000),
    }));
    const first = await harness.callJson('list_variables', { count: 40 });
    const next = (first.truncated as { next_start: number }).next_start;
    expect(next).toBeGreaterThan(0);
    expect(next).toBeLessThan(40);
    expect((first.variables as unknown[]).length).toBe(next);
    const rest = await harness.callJson('list_variables', { start: next, count: 40 });
    expect((rest.variables as VariableEntry[])[0]?.name).toBe(`v${String(next).padStart(2, '0')}`);
    expect(await toolError(harness.call('list_variables', { count: 0 }))).toContain('count must be between 1 and 200');
    expect(await toolError(harness.call('list_variables', { filter: 'a\u0000' }))).toContain('control characters');
    expect(await toolError(harness.call('list_variables', { wait_secs: 61 }))).toContain('at most 60');
  });

  it('list_variables: a busy kernel is answered at once, with the last listing labelled', async () => {
    await withNotebook();
    const listed = await harness.callJson('list_variables');
    kernel.state = 'running';
    const busy = await harness.callJson('list_variables');
    expect(busy).toMatchObject({
      busy: true,
      last_listing: { taken_at: listed.taken_at, execution_count: 7, total: 3, variables: listed.variables },
    });
    expect(String(busy.note)).toContain('did not take the listing within 3 s');
    expect(String(busy.hint)).toContain('interrupt_kernel');
    expect(await harness.callJson('inspect_variable', { name: 'items' })).toMatchObject({
      busy: true,
      last_seen: { taken_at: listed.taken_at, variable: { name: 'items', length: 3 } },
    });
  });

  it('inspect_variable: one variable in detail; a missing one names similar names', async () => {
    const handle = await withNotebook();
    expect(await harness.callJson('inspect_variable', { name: 'frame', rows: 5 })).toMatchObject({
      notebook_id: handle.notebookId,
      variable: { name: 'frame', columns: [{ name: 'a', dtype: 'int64' }], size_bytes: 120 },
      kernel_memory: { rss_bytes: 52_428_800 },
    });
    expect(kernel.programs.at(-1)?.settings).toMatchObject({
      kind: 'inspect',
      name: 'frame',
      rows: 5,
      repr_chars: 2000,
    });
    expect(await toolError(harness.call('inspect_variable', { name: 'fram' }))).toBe(
      `No variable named "fram" in the kernel of notebook ${handle.notebookId}. Similar names: frame; list_variables shows the 3 it has.`,
    );
    expect(await toolError(harness.call('inspect_variable', { name: '' }))).toBe('name must not be empty.');
    expect(await toolError(harness.call('inspect_variable', { name: 'frame', rows: 51 }))).toBe(
      'rows must be at most 50.',
    );
  });

  it('tells a kernel notice the run carried, as run_code does, with an answer or an error', async () => {
    const handle = await withNotebook();
    handle.nextKernelNotice = 'The kernel was restarted';
    expect(await harness.callJson('list_variables')).toMatchObject({ kernel_notice: 'The kernel was restarted' });
    // Told with an error too: the agent must hear that its state is gone.
    handle.nextKernelNotice = 'The kernel died';
    expect(await toolError(harness.call('inspect_variable', { name: 'gone' }))).toMatch(/Note: The kernel died$/);
  });

  it('runs the R program in an R kernel, known by name or by the kernel list; refuses other languages, naming them', async () => {
    const handle = await withNotebook();
    handle.kernelName = 'ir';
    await harness.callJson('list_variables', { filter: 'é"' });
    expect(kernel.programs.at(-1)?.source.startsWith('invisible(local({')).toBe(true);
    expect(kernel.programs.at(-1)?.settings).toMatchObject({ kind: 'list', filter: 'é"' });
    handle.kernelName = 'mine';
    await harness.callJson('inspect_variable', { name: 'count' });
    expect(kernel.programs.at(-1)?.source.startsWith('invisible(local({')).toBe(true);
    handle.kernelName = 'deno';
    expect(await toolError(harness.call('list_variables'))).toBe(
      `Notebook ${handle.notebookId} runs the kernel 'deno' (language typescript); core's kernel tools (variables, packages) support Python (ipykernel) and R (IRkernel) kernels. Use run_code instead.`,
    );
    expect(kernel.programs).toHaveLength(2);
  });
});
