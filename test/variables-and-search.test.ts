import { afterEach, describe, expect, it } from 'vitest';
import {
  type JupyterServerUnderTest,
  startJupyterServer,
  startUserSession,
  type ToolOutcome,
  type UserSession,
  waitFor,
} from './support/index.js';

/**
 * What the agent can look at without changing anything (issue 47): the kernel's variables
 * (`list_variables`, `inspect_variable`) in real Python and R kernels, local and hosted, and
 * `search_notebook` over the open notebooks, through the shipped proxy as a user runs it (fresh
 * HOME, nothing pre-started, default options).
 */

const sessions: UserSession[] = [];
const servers: JupyterServerUnderTest[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
  for (const server of servers.splice(0)) await server.dispose();
});

async function start(): Promise<UserSession> {
  const session = await startUserSession();
  sessions.push(session);
  return session;
}

/** A call that must succeed; its JSON. */
async function ok(
  session: UserSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const outcome = await session.call(name, args);
  expect(outcome.isError, `${name}: ${outcome.text}`).toBe(false);
  return outcome.json ?? {};
}

/** A call that must fail; its text. */
async function refused(session: UserSession, name: string, args: Record<string, unknown>): Promise<string> {
  const outcome: ToolOutcome = await session.call(name, args);
  expect(outcome.isError, `${name} should have failed: ${outcome.text}`).toBe(true);
  return outcome.text;
}

/** The notebook as the agent reads it: every cell with its source, execution count and outputs. */
async function cellsOf(session: UserSession): Promise<unknown> {
  return (await ok(session, 'get_all_cells', { format: 'json' })).cells;
}

interface Listed {
  readonly name: string;
  readonly type: string;
  readonly repr: string;
  readonly length?: number;
  readonly shape?: number[];
  readonly columns?: { name: string; dtype: string }[];
  readonly rows?: string[][];
  readonly items?: unknown[];
  readonly size_bytes?: number;
}

const variablesOf = (json: Record<string, unknown>): Listed[] => json.variables as Listed[];
const namesOf = (json: Record<string, unknown>): string[] => variablesOf(json).map((entry) => entry.name);

describe('list_variables and inspect_variable', () => {
  it('lists and inspects a Python kernel’s variables, hiding its internals, and leaves the notebook and the execution count as they were', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    await ok(session, 'create_notebook');
    const probe = await ok(session, 'run_code', {
      code: "import importlib.util\nprint('pandas' if importlib.util.find_spec('pandas') else 'no pandas')",
      timeout_secs: 120,
    });
    const pandas = !JSON.stringify(probe.outputs).includes('no pandas');
    const frameCode = pandas
      ? "import pandas as pd\ntable = pd.DataFrame({'city': ['Oslo', 'Lima'], 'people': [709_000, 10_000_000]})"
      : "table = {'city': ['Oslo', 'Lima'], 'people': [709_000, 10_000_000]}";
    const defined = await ok(session, 'create_cell', {
      source: `import math\ncount = 42\nitems = [1, 2, 3]\n_private = 'hidden'\n${frameCode}`,
      and_run: true,
      timeout_secs: 120,
    });
    expect(defined).toMatchObject({ status: 'done', execution_count: 1 });
    const before = await cellsOf(session);

    const listed = await ok(session, 'list_variables');
    expect(listed).toMatchObject({ language: 'python', execution_count: 1, start: 0 });
    expect(namesOf(listed)).toEqual(['count', 'items', 'table']);
    const [count, items, table] = variablesOf(listed);
    expect(count).toMatchObject({ type: 'int', repr: '42' });
    expect(items).toMatchObject({ type: 'list', repr: '[1, 2, 3]', length: 3 });
    if (pandas) {
      expect(table).toMatchObject({
        type: 'DataFrame',
        shape: [2, 2],
        columns: [
          { name: 'city', dtype: expect.stringMatching(/^(object|str|string)$/) },
          { name: 'people', dtype: 'int64' },
        ],
        rows: [
          ['Oslo', '709000'],
          ['Lima', '10000000'],
        ],
      });
    } else {
      expect(table).toMatchObject({ type: 'dict', length: 2 });
      expect(table?.repr).toContain("'city': ['Oslo', 'Lima']");
    }
    expect(listed.kernel_memory).toMatchObject({ source: expect.any(String) });
    expect(Object.keys(listed.kernel_memory as object)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(rss_bytes|peak_rss_bytes)$/)]),
    );

    const filtered = await ok(session, 'list_variables', { filter: '*t*e*' });
    expect(namesOf(filtered)).toEqual(['items', 'table']);
    expect(namesOf(await ok(session, 'list_variables', { filter: 'COU' }))).toEqual(['count']);
    const paged = await ok(session, 'list_variables', { count: 2 });
    expect(paged).toMatchObject({ total: 3, truncated: { next_start: 2 } });

    const inspected = await ok(session, 'inspect_variable', { name: 'table' });
    expect(inspected.variable).toMatchObject({ name: 'table', size_bytes: expect.any(Number) });
    if (pandas) {
      expect(inspected.variable).toMatchObject({ columns: [{ name: 'city' }, { name: 'people' }], index: ['0', '1'] });
    } else {
      expect((inspected.variable as Listed).items).toEqual([
        { key: "'city'", value: "['Oslo', 'Lima']" },
        { key: "'people'", value: '[709000, 10000000]' },
      ]);
    }
    expect(await refused(session, 'inspect_variable', { name: 'tabel' })).toContain('Similar names: table');

    // Nothing changed: the cells, their counts and outputs; the next cell gets count 2, and the
    // listings left no name behind.
    expect(await cellsOf(session)).toEqual(before);
    const program = [
      'settings',
      'settings_json',
      'missing',
      'describe',
      'short',
      'cut',
      'main',
      'memory',
      'json',
      'types',
    ];
    const next = await ok(session, 'create_cell', {
      source: `print([name for name in globals() if name in ${JSON.stringify(program)}], len(In))`,
      and_run: true,
    });
    expect(next).toMatchObject({ status: 'done', execution_count: 2 });
    // None of the program's names, and only the two cells in the history (In[0] is IPython's empty entry).
    expect(JSON.stringify(next.outputs)).toContain('[] 3');
  });

  it('answers at once with busy and the last listing while a cell runs, without waiting for it', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    await ok(session, 'create_notebook');
    await ok(session, 'create_cell', { source: 'before_sleep = 1', and_run: true, timeout_secs: 120 });
    const listed = await ok(session, 'list_variables');
    expect(namesOf(listed)).toEqual(['before_sleep']);

    const sleeping = await ok(session, 'create_cell', {
      source: 'import time\nduring_sleep = 2\ntime.sleep(30)',
      and_run: true,
      timeout_secs: 1,
    });
    expect(sleeping.status).toBe('running');
    const busy = await ok(session, 'list_variables');
    expect(busy).toMatchObject({
      busy: true,
      last_listing: { taken_at: listed.taken_at, execution_count: 1, variables: listed.variables },
    });
    // Answered while the cell still runs: the listing did not wait for it.
    expect((await ok(session, 'get_results', { execution_id: sleeping.execution_id })).status).toBe('running');
    // A second call sends nothing more (one listing waits behind the cell), and inspect says busy too.
    expect(String((await ok(session, 'list_variables')).note)).toContain('still waits behind the code it runs');
    expect(await ok(session, 'inspect_variable', { name: 'before_sleep' })).toMatchObject({
      busy: true,
      last_seen: { variable: { name: 'before_sleep', repr: '1' } },
    });
    expect((await ok(session, 'get_results', { execution_id: sleeping.execution_id })).status).toBe('running');

    await ok(session, 'interrupt_kernel');
    const fresh = await waitFor(
      'a listing once the kernel is free',
      async () => {
        const answer = await ok(session, 'list_variables');
        return answer.busy === true ? undefined : answer;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // The interrupted cell had defined during_sleep; its module `time` is not listed.
    expect(namesOf(fresh)).toEqual(['before_sleep', 'during_sleep']);
  });

  it('lists and inspects an R kernel’s variables (a data.frame with its columns and rows), leaving the notebook as it was', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    await ok(session, 'create_notebook', { kernel: 'ir' });
    const defined = await ok(session, 'create_cell', {
      source:
        'count <- 42L\nitems <- list(1, "b", 3)\nframe <- data.frame(city = c("Oslo", "Lima"), people = c(709000, 1e7))\n.hidden <- TRUE',
      and_run: true,
      timeout_secs: 120,
    });
    expect(defined).toMatchObject({ status: 'done', execution_count: 1 });
    const before = await cellsOf(session);

    const listed = await ok(session, 'list_variables');
    expect(listed).toMatchObject({ language: 'r', execution_count: 1, total: 3 });
    expect(namesOf(listed)).toEqual(['count', 'frame', 'items']);
    const [count, frame, items] = variablesOf(listed);
    expect(count).toMatchObject({ type: 'integer', repr: 'int 42', length: 1 });
    expect(items).toMatchObject({ type: 'list', length: 3 });
    expect(frame).toMatchObject({
      type: 'data.frame',
      shape: [2, 2],
      columns: [
        { name: 'city', dtype: 'character' },
        { name: 'people', dtype: 'numeric' },
      ],
    });
    expect(frame?.rows).toHaveLength(2);
    expect(frame?.rows?.[0]?.[0]).toBe('Oslo');
    expect(listed.kernel_memory).toMatchObject({ used_bytes: expect.any(Number), source: 'gc() (memory R holds)' });

    const inspected = await ok(session, 'inspect_variable', { name: 'frame' });
    expect(inspected.variable).toMatchObject({ name: 'frame', columns_total: 2, size_bytes: expect.any(Number) });
    expect(await refused(session, 'inspect_variable', { name: 'fram' })).toContain('Similar names: frame');

    expect(await cellsOf(session)).toEqual(before);
    const next = await ok(session, 'create_cell', {
      source: 'cat(ls(), sep = ",")',
      and_run: true,
    });
    expect(next).toMatchObject({ status: 'done', execution_count: 2 });
    // The listings left none of their own names (settings, emit, describe…) in the global environment.
    expect(JSON.stringify(next.outputs)).toContain('"text":"count,frame,items"');
  });

  it('lists the variables of a hosted notebook on a Jupyter Server, leaving its execution count as it was', {
    timeout: 240_000,
  }, async () => {
    const token = `tok-${process.pid}-${Date.now().toString(36)}`;
    const server = await startJupyterServer({ token });
    servers.push(server);
    await server.putEmptyNotebook('hosted.ipynb');
    const session = await startUserSession({ env: { JUPYTER_TOKEN: token } });
    sessions.push(session);
    await ok(session, 'connect_notebook', { url: server.notebookUrl('hosted.ipynb') });
    const defined = await ok(session, 'create_cell', {
      source: 'hosted_list = [1, 2]',
      and_run: true,
      timeout_secs: 120,
    });
    expect(defined).toMatchObject({ status: 'done', execution_count: 1 });
    const before = await cellsOf(session);
    const listed = await ok(session, 'list_variables');
    expect(variablesOf(listed)).toEqual([{ name: 'hosted_list', type: 'list', repr: '[1, 2]', length: 2 }]);
    expect(await cellsOf(session)).toEqual(before);
    const next = await ok(session, 'create_cell', { source: 'print(len(hosted_list))', and_run: true });
    expect(next).toMatchObject({ status: 'done', execution_count: 2 });
  });
});

describe('search_notebook', () => {
  it('finds a regular expression in sources and outputs across two open notebooks, with cell ids and lines; a bad pattern is an error', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const first = await ok(session, 'create_notebook');
    const a1 = await ok(session, 'create_cell', { source: '# Revenue\nNotes only', cell_type: 'markdown' });
    const a2 = await ok(session, 'create_cell', {
      source: 'revenue_2023 = 41\nprint("revenue_2023 is", revenue_2023)',
      and_run: true,
      timeout_secs: 120,
    });
    expect(a2.status).toBe('done');
    const second = await ok(session, 'create_notebook');
    const b1 = await ok(session, 'create_cell', { source: 'growth = 2\nforecast = revenue_2024 = 43' });

    const all = await ok(session, 'search_notebook', { query: 'revenue_\\d{4}', regex: true, notebook: 'all' });
    const found = (all.matches as Record<string, unknown>[]).map((match) => ({
      notebook: match.notebook_id,
      cell: match.cell_id,
      in: match.in,
      line: match.line,
      text: match.text,
    }));
    expect(found).toEqual([
      { notebook: second.notebook_id, cell: b1.cell_id, in: 'source', line: 2, text: 'forecast = revenue_2024 = 43' },
      { notebook: first.notebook_id, cell: a2.cell_id, in: 'source', line: 1, text: 'revenue_2023 = 41' },
      {
        notebook: first.notebook_id,
        cell: a2.cell_id,
        in: 'source',
        line: 2,
        text: 'print("revenue_2023 is", revenue_2023)',
      },
      { notebook: first.notebook_id, cell: a2.cell_id, in: 'output', line: 1, text: 'revenue_2023 is 41' },
    ]);
    expect((all.matches as Record<string, unknown>[])[0]).toMatchObject({ cell_index: 0, before: ['growth = 2'] });
    expect(all.total_matches).toBe(4);

    // The active notebook only; outputs only; plain text (case-insensitive) finds the markdown heading.
    expect((await ok(session, 'search_notebook', { query: 'revenue_\\d{4}', regex: true })).total_matches).toBe(1);
    const outputs = await ok(session, 'search_notebook', { query: ' is 41', notebook: 'all', in: 'outputs' });
    expect(outputs.matches).toEqual([expect.objectContaining({ cell_id: a2.cell_id, in: 'output', output_index: 0 })]);
    const heading = await ok(session, 'search_notebook', { query: '# REVENUE', notebook: 'all' });
    expect(heading.matches).toEqual([expect.objectContaining({ cell_id: a1.cell_id, cell_type: 'markdown', line: 1 })]);

    expect(await refused(session, 'search_notebook', { query: 'revenue_(\\d{4}', regex: true })).toMatch(
      /^Invalid regular expression "revenue_\(\\\\d\{4\}": /,
    );
  });
});
