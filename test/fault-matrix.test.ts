// The fault matrix: every fault × {idle, during an edit, during an execution}, through the real
// proxy, child and daemon, started as a user starts them (test/support). Each cell asserts the
// promises: every request got exactly one answer; the notebook's cells (live and in the saved
// .ipynb) equal the acknowledged edits; an execution ran once; the session is active again on the
// same notebook by itself; the kernel's state is kept where the kernel survived, and a new kernel
// is announced where it did not. The matrix is printed as a table after the run.
//
// CI (default): one session per row, a fresh one after a failed cell, three rows at a time.
// NTERACT_FAULT_MATRIX=full: a fresh session for every cell. NTERACT_FAULT_MATRIX_ROWS=<regexp>: only
// the matching rows (while working on one fault).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  brokenKernelArgv,
  installKernelspec,
  processesWithHome,
  readNotebookFile,
  type SettledCall,
  startUserSession,
  type UserSession,
  waitFor,
} from './support/index.js';

type Context = 'idle' | 'edit' | 'exec';
const contexts: readonly Context[] = ['idle', 'edit', 'exec'];
const contextTitles: Record<Context, string> = { idle: 'idle', edit: 'during an edit', exec: 'during an execution' };

/** Where a fault strikes: from outside (after the request is sent), or through a hook armed before it. */
interface Fault {
  readonly name: string;
  /**
   * Whether the kernel (and so `x`) outlives the fault; `with-the-daemon`: when the daemon process
   * that ran before the fault still runs after it (a stalled daemon may be replaced, or go on).
   */
  readonly kernelSurvives: boolean | 'with-the-daemon';
  /** The fault hook that must have fired in the cell (proof the fault happened), if it uses one. */
  readonly hook?: string;
  /**
   * Contexts where the call in flight may be answered with an error (the daemon or the kernel it
   * needed died under it; the answer must still come, once). Everywhere else every call must
   * succeed: the proxy stamps an idempotency key on each call that is not read-only and replays it
   * to the new child.
   */
  readonly mayFailInFlight?: readonly Context[];
  /** Arms a hook for the request that `target` names, before it is sent. */
  arm?(session: UserSession, target: { tool: string; match?: string }): void;
  /** Injects the fault now; returns how to undo it (event hooks), if anything. */
  inject?(session: UserSession, cell: number): Promise<(() => void) | undefined>;
  /** Undo the fault as soon as the calls in flight are answered, before the checks (disk space freed, …). */
  readonly healBeforeChecks?: boolean;
  /** The agent must be told: an answer of the cell (or `session_status` after it) matches this. */
  readonly told?: RegExp;
  /** The contexts this row has (default all three); the others print '—'. */
  readonly contexts?: readonly Context[];
  /**
   * A row whose fault does not fit the edit/execution shape (a kernel that never starts, …): runs
   * instead of the shared cell; returns its failures. The answer-count check still applies.
   */
  scenario?(row: RowSession, context: Context, cell: number): Promise<string[]>;
}

const faults: readonly Fault[] = [
  {
    name: 'child SIGKILL (before the request is written / while in flight)',
    kernelSurvives: true,
    inject: async (s) => {
      await s.faults.killChild();
      return undefined;
    },
  },
  {
    name: 'child killed after the request is written, before it runs',
    kernelSurvives: true,
    hook: 'child-kill',
    arm: (s, target) => s.faults.killChildOnRequest(target.tool, target.match),
  },
  {
    name: 'child killed after the call ran, before its reply',
    kernelSurvives: true,
    hook: 'child-kill',
    arm: (s, target) => s.faults.killChildBeforeReply(target.tool, target.match),
  },
  {
    name: 'child exit 75',
    kernelSurvives: true,
    hook: 'exit-75',
    inject: async (s) => {
      await s.faults.childExit75();
      return undefined;
    },
  },
  {
    name: 'daemon SIGKILL',
    kernelSurvives: false,
    mayFailInFlight: ['edit', 'exec'],
    inject: async (s) => {
      await s.faults.killDaemon();
      return undefined;
    },
  },
  {
    name: 'daemon same-version restart (runtimed stop; the child restarts it)',
    kernelSurvives: false,
    mayFailInFlight: ['edit', 'exec'],
    inject: async (s) => {
      await s.faults.stopDaemon();
      return undefined;
    },
  },
  {
    name: 'daemon upgrade (another version)',
    kernelSurvives: false,
    mayFailInFlight: ['edit', 'exec'],
    inject: async (s, cell) => {
      await s.faults.upgradeDaemon(`9.${cell}.0`);
      return undefined;
    },
  },
  {
    name: 'daemon events dropped',
    kernelSurvives: true,
    hook: 'daemon-event-drop',
    inject: async (s) => s.faults.dropDaemonEvents(),
  },
  {
    name: 'daemon events delayed 1.5 s',
    kernelSurvives: true,
    hook: 'daemon-event-delay',
    inject: async (s) => s.faults.delayDaemonEvents(1500),
  },
  {
    name: 'identity query fails, no disconnect',
    kernelSurvives: true,
    hook: 'daemon-info-fail',
    inject: async (s) => {
      s.faults.failDaemonInfo(3);
      return undefined;
    },
  },
  {
    name: 'daemon stalled (SIGSTOP) 5 s',
    kernelSurvives: 'with-the-daemon',
    inject: async (s) => {
      await s.faults.stallDaemon(5_000);
      return undefined;
    },
  },
  {
    name: 'daemon stalled (SIGSTOP) 20 s',
    kernelSurvives: 'with-the-daemon',
    inject: async (s) => {
      await s.faults.stallDaemon(20_000);
      return undefined;
    },
  },
  {
    name: 'daemon stalled (SIGSTOP) 60 s',
    kernelSurvives: 'with-the-daemon',
    inject: async (s) => {
      await s.faults.stallDaemon(60_000);
      return undefined;
    },
  },
  {
    name: 'disk full (ENOSPC) during autosave',
    kernelSurvives: true,
    hook: 'disk-fail',
    healBeforeChecks: true,
    told: /Saving .+ failed \(ENOSPC: no space left on device/,
    inject: async (s) => s.faults.failDisk('ENOSPC', s.dirs.project),
  },
  {
    name: 'read-only directory (EROFS) during autosave',
    kernelSurvives: true,
    hook: 'disk-fail',
    healBeforeChecks: true,
    told: /Saving .+ failed \(EROFS: read-only file system/,
    inject: async (s) => s.faults.failDisk('EROFS', s.dirs.project),
  },
  {
    name: 'disk full (ENOSPC) during save-as',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => saveAsScenario(row, 'ENOSPC'),
  },
  {
    name: 'read-only directory (EROFS) during save-as',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => saveAsScenario(row, 'EROFS'),
  },
  {
    name: 'notebook file deleted',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => fileChangeScenario(row, 'deleted'),
  },
  {
    name: 'notebook file renamed',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => fileChangeScenario(row, 'renamed'),
  },
  {
    name: 'notebook file replaced by another program',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => fileChangeScenario(row, 'replaced'),
  },
  {
    name: 'kernel exits at start',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) => brokenKernelScenario(row, 'exits', /Kernel 'exits' .*boom: cannot start/s),
  },
  {
    name: 'kernel never answers (no kernel_info reply)',
    kernelSurvives: true,
    contexts: ['idle'],
    scenario: (row) =>
      brokenKernelScenario(
        row,
        'hangs',
        /Kernel 'hangs' did not answer kernel_info_request within 20000 ms \(it was killed\)/,
      ),
  },
  {
    name: 'kernel ignores SIGINT',
    kernelSurvives: false,
    contexts: ['exec'],
    scenario: (row, _context, cell) => stubbornKernelScenario(row, cell),
  },
  {
    name: 'kernel SIGKILL',
    kernelSurvives: false,
    mayFailInFlight: ['exec'],
    inject: async (s) => {
      await s.faults.killKernel();
      return undefined;
    },
  },
  // ── What a lost kernel took with it (issue 33: the kernel history, lost_state, restore_state) ──
  {
    name: 'kernel SIGKILL: the lost variables are named',
    kernelSurvives: false,
    mayFailInFlight: ['exec'],
    inject: async (s) => {
      await s.faults.killKernel();
      return undefined;
    },
    told: /Gone with the old kernel \(defined by the cells this agent ran\): variables x\b.*restore_state\(\) runs/,
  },
  // ── A superseded daemon never acts (issue 46, 1) ──
  {
    name: 'daemon stopped under execute_cell, let go on as its successor starts',
    kernelSurvives: 'with-the-daemon',
    contexts: ['exec'],
    scenario: (row, _context, cell) => supersededDaemonScenario(row, cell),
  },
  // ── Executions as MCP tasks (issue 34) ──
  {
    name: 'child SIGKILL under a task (tasks/result in flight)',
    kernelSurvives: true,
    contexts: ['exec'],
    scenario: (row, _context, cell) => taskScenario(row, cell),
  },
];

/** What the agent is told when its kernel is new (a daemon restart, a killed kernel): the daemon's `kernel_notice`. */
const freshKernelNotice = /runs in a new kernel, so variables and imports from earlier runs are not defined/;

interface CellResult {
  readonly failures: string[];
  /** Wall time of the cell, for the runtime budget (not asserted). */
  readonly seconds: number;
}

interface Edit {
  readonly source: string;
  /** true: answered without error; false: answered with an error or not at all (outcome unknown). */
  acked: boolean;
  /** An answer said its outcome was unknown (then an error for it is no false answer if it was made). */
  unknown: boolean;
}

/** One session used by one or more cells of a row, with the bookkeeping the checks need. */
interface RowSession {
  readonly session: UserSession;
  readonly notebookId: string;
  readonly notebookPath: string;
  readonly edits: Edit[];
  /** Answers that said a call's outcome was unknown (each followed by the same call once more). */
  readonly unknownOutcomes: string[];
}

const full = process.env.NTERACT_FAULT_MATRIX === 'full';
/** Development aid: run only the rows whose name matches this regular expression. */
const rowFilter = process.env.NTERACT_FAULT_MATRIX_ROWS
  ? new RegExp(process.env.NTERACT_FAULT_MATRIX_ROWS, 'i')
  : undefined;
const selected = faults.filter((fault) => !rowFilter || rowFilter.test(fault.name));
const rowConcurrency = full ? 2 : 3;
const results = new Map<string, CellResult>();
const key = (fault: Fault, context: Context) => `${fault.name}|${context}`;
const contextsOf = (fault: Fault): readonly Context[] => fault.contexts ?? contexts;

async function openRow(row: number): Promise<RowSession> {
  const session = await startUserSession({ faultHooks: true, requestTimeoutMs: 90_000 });
  try {
    const created = await session.call('create_notebook', {});
    const notebookId = created.json?.notebook_id;
    if (created.isError || typeof notebookId !== 'string') throw new Error(`create_notebook: ${created.text}`);
    const notebookPath = join(session.dirs.project, `matrix-${row}.ipynb`);
    const saved = await session.call('save_notebook', { path: notebookPath });
    if (saved.isError) throw new Error(`save_notebook: ${saved.text}`);
    mkdirSync(join(session.dirs.project, 'runs'), { recursive: true });
    return { session, notebookId, notebookPath, edits: [], unknownOutcomes: [] };
  } catch (error) {
    await session.stop();
    throw error;
  }
}

/**
 * Sends a create_cell now and records whether it was acknowledged once it settles. An answer that
 * says the outcome is unknown (and that the same call again is safe) is followed, as an agent
 * would, by the same call once more: the edit counts as acknowledged when that one is.
 */
async function sendEdit(row: RowSession, source: string, run: boolean): Promise<SettledCall> {
  const edit: Edit = { source, acked: false, unknown: false };
  row.edits.push(edit);
  const args = run ? { source, and_run: true, timeout_secs: 30 } : { source };
  let settled = await row.session.send('create_cell', args);
  // As an agent does with what it is told: an unknown outcome is sent again (it is safe, the
  // answer says); a call refused while the session is brought back is sent again once it is.
  for (let retry = 0; retry < 3 && settled.ok && settled.outcome.isError; retry++) {
    const { text } = settled.outcome;
    if (/^Outcome unknown: .*same arguments is safe/s.test(text)) {
      edit.unknown = true;
      row.unknownOutcomes.push(text);
    } else if (!/\[nteract\] This create_cell did nothing: .* is being brought back by itself/s.test(text)) break;
    await waitForActive(row.session, row.notebookId).catch(() => undefined);
    settled = await row.session.send('create_cell', args);
  }
  edit.acked = settled.ok && !settled.outcome.isError;
  return settled;
}

/** Resolves once `session_status` shows `notebookId` active. */
function waitForActive(s: UserSession, notebookId: string): Promise<unknown> {
  return waitFor(
    `notebook ${notebookId} to be active`,
    async () =>
      ((await s.call('session_status')).json?.active as { notebook_id?: string } | null)?.notebook_id === notebookId,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

function runLines(row: RowSession, marker: string): number {
  const path = join(row.session.dirs.project, 'runs', `${marker}.log`);
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
}

function execSource(row: RowSession, marker: string): string {
  const log = join(row.session.dirs.project, 'runs', `${marker}.log`);
  return `# exec ${marker}\nimport time\nwith open(${JSON.stringify(log)}, 'a') as f:\n    f.write('run\\n')\ntime.sleep(3)\nprint('done ${marker}')`;
}

function describeSettled(settled: SettledCall): string {
  if (!settled.ok) return `protocol error: ${settled.error.message}`;
  const { json, text } = settled.outcome;
  // An execution result: what it did, without its ids.
  const brief =
    json && ('status' in json || 'outputs' in json)
      ? JSON.stringify({ status: json.status, outputs: json.outputs, error: json.error })
      : text;
  return brief.replace(/\s+/g, ' ').slice(0, 240);
}

/** Whether `hook` fired since the `since`-th firing. */
function hookFired(s: UserSession, hook: string, since: number): boolean {
  return s.faults
    .fired()
    .slice(since)
    .some((entry) => entry.hook === hook);
}

/**
 * A save to another directory that cannot be written (full, or read-only): the answer is an error
 * that says nothing changed, and nothing did: the notebook still saves to its file (an edit made
 * after it reaches that file), session_status shows that path, and nothing is at the new path.
 * Once the directory is writable again the same save works.
 */
async function saveAsScenario(row: RowSession, errno: 'ENOSPC' | 'EROFS'): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const firstFiring = s.faults.fired().length;
  const elsewhere = join(s.dirs.project, `elsewhere-${errno}`);
  mkdirSync(elsewhere, { recursive: true });
  const newPath = join(elsewhere, 'moved.ipynb');
  const heal = s.faults.failDisk(errno, elsewhere);
  try {
    const saved = await s.call('save_notebook', { path: newPath });
    const expected = new RegExp(
      `^Failed to save notebook: Cannot save to ${newPath}: ${errno}: .+. Nothing changed: it is still saved to ${row.notebookPath}.$`,
    );
    if (!saved.isError || !expected.test(saved.text))
      failures.push(`save_notebook answered: ${saved.text.slice(0, 200)}`);
    if (!hookFired(s, 'disk-fail', firstFiring)) failures.push('the disk-fail hook did not fire');
    if (existsSync(newPath)) failures.push('a file appeared at the path that could not be written');
    const status = await s.call('session_status');
    const activePath = (status.json?.active as { path?: string } | null | undefined)?.path;
    if (activePath !== row.notebookPath) failures.push(`session_status shows the path ${String(activePath)}`);
    const source = `# after the failed save-as ${errno}`;
    const edit = await sendEdit(row, source, false);
    if (!edit.ok || edit.outcome.isError) failures.push(`an edit after it failed: ${describeSettled(edit)}`);
    await waitFor(
      'the edit to reach the notebook file',
      () => readNotebookFile(row.notebookPath).some((cell) => cell.source === source),
      { timeoutMs: 20_000 },
    ).catch(() => failures.push('the edit after the failed save-as did not reach the notebook file'));
  } finally {
    heal();
  }
  const again = await s.call('save_notebook', { path: newPath });
  if (again.isError) failures.push(`the same save once the directory is writable: ${again.text.slice(0, 200)}`);
  else if (!existsSync(newPath)) failures.push('the save that worked wrote no file');
  // The row goes on with its own file.
  const back = await s.call('save_notebook', { path: row.notebookPath });
  if (back.isError) failures.push(`saving back to the row's file: ${back.text.slice(0, 200)}`);
  return failures;
}

/**
 * Another program deletes, renames or replaces the notebook's file: the agent is told (in an answer
 * or session_status), nothing acknowledged is lost, the session stays on the notebook, and the
 * file holds the notebook again after the next edit (a replaced one: the replacement, reloaded).
 */
async function fileChangeScenario(row: RowSession, change: 'deleted' | 'renamed' | 'replaced'): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const path = row.notebookPath;
  const firstNews = s.transport.news().length;
  const setup = await sendEdit(row, `# before the file is ${change}`, false);
  if (!setup.ok || setup.outcome.isError) return [`setup failed: ${describeSettled(setup)}`];
  await waitFor(
    'the edit to be saved',
    () => readNotebookFile(path).some((cell) => cell.source === `# before the file is ${change}`),
    {
      timeoutMs: 20_000,
    },
  );
  const liveSources = async (): Promise<string[] | undefined> => {
    const listed = await s.send('get_all_cells', { format: 'json' });
    return listed.ok
      ? (listed.outcome.json?.cells as { source: string }[] | undefined)?.map((cell) => cell.source)
      : undefined;
  };
  const before = (await liveSources()) ?? [];
  const renamed = join(s.dirs.project, `renamed-${Date.now()}.ipynb`);
  let told: RegExp;
  if (change === 'deleted') {
    rmSync(path);
    told = new RegExp(`${path} was deleted or moved away by another program`);
  } else if (change === 'renamed') {
    renameSync(path, renamed);
    told = new RegExp(`${path} was renamed to ${renamed} by another program`);
  } else {
    const notebook = JSON.parse(readFileSync(path, 'utf8')) as { cells: Record<string, unknown>[] };
    notebook.cells.push({
      cell_type: 'code',
      id: `theirs-${Date.now()}`,
      metadata: {},
      source: ['# theirs'],
      outputs: [],
      execution_count: null,
    });
    const temp = `${path}.other-program.tmp`;
    writeFileSync(temp, JSON.stringify(notebook, null, 1));
    renameSync(temp, path);
    told = new RegExp(`${path} was replaced on disk by another program; the notebook was reloaded from it`);
  }
  try {
    await waitFor(
      `the agent to be told ${String(told)}`,
      async () => {
        if (
          s.transport
            .news()
            .slice(firstNews)
            .some((line) => told.test(line))
        )
          return true;
        return told.test((await s.call('session_status')).text);
      },
      { timeoutMs: 20_000 },
    );
  } catch {
    failures.push(`the agent was not told (${String(told)})`);
  }
  const expectedLive = change === 'replaced' ? [...before, '# theirs'] : before;
  const live = await liveSources();
  if (JSON.stringify(live) !== JSON.stringify(expectedLive))
    failures.push(`live cells ${JSON.stringify(live)}, expected ${JSON.stringify(expectedLive)}`);
  const after = await sendEdit(row, `# after the file was ${change}`, false);
  if (!after.ok || after.outcome.isError) failures.push(`the next edit: ${describeSettled(after)}`);
  const expected = [...expectedLive, `# after the file was ${change}`];
  await waitFor(
    'the file to hold the notebook again',
    () => {
      const disk = readNotebookFile(path).map((cell) => cell.source);
      if (JSON.stringify(disk) === JSON.stringify(expected)) return true;
      throw new Error(`it holds ${JSON.stringify(disk)}`);
    },
    { timeoutMs: 20_000 },
  ).catch((error: Error) => failures.push(`the file: ${error.message}`));
  const status = await s.call('session_status');
  if ((status.json?.active as { notebook_id?: string } | null | undefined)?.notebook_id !== row.notebookId)
    failures.push('the session left the notebook');
  if (change === 'replaced') {
    // The row's own bookkeeping: the replacement's cell is one nobody created through the agent.
    row.edits.push({ source: '# theirs', acked: true, unknown: false });
  }
  return failures;
}

/**
 * create_notebook with a kernel that does not come up: an error within its 20 s bound that says why (not
 * "ready"), and the agent's notebook stays its active session, its kernel untouched.
 */
async function brokenKernelScenario(row: RowSession, kernel: 'exits' | 'hangs', why: RegExp): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  installKernelspec(s.dirs, kernel, brokenKernelArgv[kernel]);
  const nonce = `${kernel}-${Date.now()}`;
  const setup = await sendEdit(row, `kept = ${JSON.stringify(nonce)}`, true);
  if (!setup.ok || setup.outcome.isError) return [`setup failed: ${describeSettled(setup)}`];
  const created = await s.send('create_notebook', { kernel });
  if (!created.ok) failures.push(`create_notebook failed: ${created.error.message}`);
  else if (!created.outcome.isError) failures.push(`create_notebook said it worked: ${describeSettled(created)}`);
  else if (
    !/^Failed to create notebook: its kernel did not start/.test(created.outcome.text) ||
    !why.test(created.outcome.text)
  )
    failures.push(`create_notebook's error does not say why: ${describeSettled(created)}`);
  const status = await s.call('session_status');
  const active = (status.json?.active as { notebook_id?: string } | null | undefined)?.notebook_id;
  if (active !== row.notebookId) failures.push(`the active notebook is now ${String(active)}`);
  const check = await sendEdit(row, 'print(kept)', true);
  if (!check.ok || !check.outcome.text.includes(nonce))
    failures.push(`the kernel lost its state: ${describeSettled(check)}`);
  if (kernel === 'hangs') {
    await waitFor(
      'the hung kernel to be killed',
      () => !processesWithHome(s.dirs.home).some((p) => p.cmdline.includes('sleep 600')),
      {
        timeoutMs: 15_000,
      },
    ).catch(() => failures.push('the kernel that never answered still runs'));
  }
  return failures;
}

/**
 * Code that ignores SIGINT runs; interrupt_kernel must not say it stopped it, and must point to
 * restart_kernel, which does; the notebook runs code again after it.
 */
async function stubbornKernelScenario(row: RowSession, cell: number): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const marker = `stubborn_${cell}`;
  const running = await sendEdit(
    row,
    `# ${marker}\nimport signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring SIGINT', flush=True)\ntime.sleep(300)`,
    false,
  );
  const cellId = running.ok ? (running.outcome.json?.cell_id as string | undefined) : undefined;
  if (cellId === undefined) return [`creating the cell failed: ${describeSettled(running)}`];
  const started = await s.send('execute_cell', { cell_id: cellId, timeout_secs: 3 });
  if (!started.ok || started.outcome.isError) failures.push(`execute_cell: ${describeSettled(started)}`);
  const interrupted = await s.send('interrupt_kernel');
  if (!interrupted.ok) failures.push(`interrupt_kernel failed: ${interrupted.error.message}`);
  else if (
    !interrupted.outcome.isError ||
    !/^Not interrupted: .*restart_kernel stops it/s.test(interrupted.outcome.text)
  )
    failures.push(`interrupt_kernel answered: ${describeSettled(interrupted)}`);
  const restarted = await s.send('restart_kernel');
  if (!restarted.ok || restarted.outcome.isError) failures.push(`restart_kernel: ${describeSettled(restarted)}`);
  const after = await sendEdit(row, `print(6 * 7)  # after ${marker}`, true);
  if (!after.ok || !after.outcome.text.includes('42'))
    failures.push(`no run after the restart: ${describeSettled(after)}`);
  return failures;
}

/**
 * The daemon stopped (SIGSTOP) while `execute_cell` of a cell that appends a line to a file is in
 * flight, and let go on (SIGCONT) the moment the child has started its successor: the stopped
 * daemon may read the buffered request, but must not act on it. The agent does what each answer
 * tells it (an unknown outcome: the same call once more). The code runs at most once, and every
 * answer is true: one that says the run ended has its line in the file, one that says the code did
 * not run (run the cell again) has none behind it.
 */
async function supersededDaemonScenario(row: RowSession, cell: number): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const marker = join(s.dirs.project, `superseded-${cell}.txt`);
  const created = await sendEdit(
    row,
    `with open(${JSON.stringify(marker)}, 'a') as f:\n    f.write('ran\\n')\nprint('appended')`,
    false,
  );
  const cellId = created.ok ? (created.outcome.json?.cell_id as string | undefined) : undefined;
  if (cellId === undefined) return [`creating the cell failed: ${describeSettled(created)}`];
  const lines = (): number =>
    existsSync(marker)
      ? readFileSync(marker, 'utf8')
          .split('\n')
          .filter((line) => line === 'ran').length
      : 0;
  const stall = await s.faults.stallDaemon(300_000);
  const first = s.send('execute_cell', { cell_id: cellId, timeout_secs: 30 });
  // The moment of replacement: another runtimed process of this user, started by the child.
  await waitFor(
    'the child to start a successor daemon',
    () =>
      (s.pids.daemon() ?? stall.pid) !== stall.pid ||
      processesWithHome(s.dirs.home).some(
        (info) => info.pid !== stall.pid && /runtimed\S*\s+start\b/.test(info.cmdline),
      ),
    { timeoutMs: 180_000, intervalMs: 25 },
  );
  stall.resume();
  const answers: SettledCall[] = [await first];
  // As an agent does: an unknown outcome is sent again with the same arguments, until one is known.
  while (answers.length < 4) {
    const last = answers.at(-1) as SettledCall;
    if (!last.ok || !last.outcome.isError || !/Outcome unknown/.test(last.outcome.text)) break;
    answers.push(await s.send('execute_cell', { cell_id: cellId, timeout_secs: 30 }));
  }
  // Settled: whichever daemon owns the notebook now runs the agent's next cell (a stopped daemon
  // that kept its lock goes on as the owner; one superseded stops).
  const after = await sendEdit(row, `print(6 * 7)  # after superseded_${cell}`, true);
  if (!after.ok || !after.outcome.text.includes('42')) failures.push(`no run after: ${describeSettled(after)}`);
  const ran = lines();
  if (ran > 1) failures.push(`the code ran ${ran} times`);
  const final = answers.at(-1) as SettledCall;
  const says = final.ok ? final.outcome.text : '';
  if (final.ok && final.outcome.json?.status === 'done' && ran !== 1) {
    failures.push(`the last answer says the run ended, but the file has ${ran} lines: ${describeSettled(final)}`);
  }
  if (/did not run|run the cell again|did nothing/i.test(says) && ran !== 0) {
    failures.push(`the last answer says the code did not run, but it ran: ${describeSettled(final)}`);
  }
  if (!final.ok) failures.push(`no answer: ${describeSettled(final)}`);
  return failures;
}

/**
 * A task on a running cell (2025 task augmentation, the v1 client), its `tasks/result` sent and in
 * flight, the child SIGKILLed: the proxy sends the read to the new child, which answers it from the
 * daemon once the cell ended: the cell's output, once.
 */
async function taskScenario(row: RowSession, cell: number): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const marker = `task_${cell}`;
  const created = await sendEdit(row, `import time\ntime.sleep(4)\nprint('${marker}', 'ended')`, false);
  const cellId = created.ok ? (created.outcome.json?.cell_id as string | undefined) : undefined;
  if (cellId === undefined) return [`creating the cell failed: ${describeSettled(created)}`];
  const started = await s.client.request(
    { method: 'tools/call', params: { name: 'execute_cell', arguments: { cell_id: cellId }, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = started.task;
  const result = s.client
    .request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema, { timeout: 120_000 })
    .then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  const killed = await s.faults.killChild();
  await s.pids.waitForChild(killed);
  const answer = await result;
  if (!answer.ok) return [...failures, `tasks/result failed: ${String(answer.error)}`];
  const text = answer.value.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
  if (text.split(`${marker} ended`).length !== 2) failures.push(`tasks/result answered: ${text.slice(0, 300)}`);
  const polled = await s.client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
  if (polled.status !== 'completed') failures.push(`tasks/get after it: ${polled.status}`);
  return failures;
}

/** Runs one cell on a row's session (the row's own scenario, or the shared one); returns its failures. */
async function runCell(row: RowSession, fault: Fault, context: Context, cell: number): Promise<string[]> {
  if (!fault.scenario) return runSharedCell(row, fault, context, cell);
  const s = row.session;
  const firstRequest = s.transport.requests().length;
  const failures = await fault.scenario(row, context, cell);
  failures.push(...answerCountFailures(s, firstRequest));
  return failures;
}

/** Every request since `firstRequest` got exactly one answer, and no answer went to an unknown id. */
function answerCountFailures(s: UserSession, firstRequest: number): string[] {
  const failures: string[] = [];
  for (const request of s.transport.requests().slice(firstRequest)) {
    if (request.answers !== 1)
      failures.push(`request ${String(request.id)} (${request.tool ?? request.method}) got ${request.answers} answers`);
  }
  if (s.transport.strays().length > 0) failures.push(`${s.transport.strays().length} answers to unknown ids`);
  return failures;
}

/** The shared cell: a value in the kernel, the fault during the context's call, then every promise checked. */
async function runSharedCell(row: RowSession, fault: Fault, context: Context, cell: number): Promise<string[]> {
  const failures: string[] = [];
  const s = row.session;
  const nonce = 1000 + cell * 7 + Math.floor(Math.random() * 1000);
  const marker = `c${cell}_${context}`;
  const firstRequest = s.transport.requests().length;
  const firstFiring = s.faults.fired().length;
  const firstNews = s.transport.news().length;

  // Setup: a value in the kernel the fault may or may not keep.
  let setx = await sendEdit(row, `x = ${nonce}  # setx ${marker}`, true);
  if (setx.ok && setx.outcome.isError && /dead|restart/i.test(setx.outcome.text)) {
    await s.call('restart_kernel');
    setx = await sendEdit(row, `x = ${nonce}  # setx again ${marker}`, true);
  }
  if (!setx.ok || setx.outcome.isError) return [`setup: x = ${nonce} failed: ${describeSettled(setx)}`];

  // The fault, at the moment the context says, and the calls sent at once.
  const daemonBefore = s.pids.daemon();
  const pending: Promise<SettledCall>[] = [];
  let heal: (() => void) | undefined;
  const source = context === 'exec' ? execSource(row, marker) : `# edit ${marker}`;
  const settledTarget: { done: boolean } = { done: false };
  try {
    if (context === 'idle') {
      if (fault.arm) {
        fault.arm(s, { tool: 'get_all_cells' });
        pending.push(s.send('get_all_cells', { format: 'json' }));
      } else heal = await fault.inject?.(s, cell);
      pending.push(sendEdit(row, source, false));
    } else {
      fault.arm?.(s, { tool: 'create_cell', match: marker });
      const target = sendEdit(row, source, context === 'exec').finally(() => {
        settledTarget.done = true;
      });
      pending.push(target);
      if (fault.inject) {
        if (context === 'exec') {
          await waitFor('the execution to start', () => runLines(row, marker) > 0 || settledTarget.done, {
            timeoutMs: 60_000,
          });
        }
        heal = await fault.inject(s, cell);
      }
    }
  } catch (error) {
    failures.push(`injecting the fault: ${(error as Error).message}`);
  }
  const answers = await Promise.all(pending);
  if (fault.healBeforeChecks) {
    // Undone only once it struck (an autosave comes a moment after the edit's answer).
    const hook = fault.hook;
    if (hook !== undefined) {
      await waitFor(`the ${hook} hook to fire`, () => hookFired(s, hook, firstFiring), {
        timeoutMs: 20_000,
      }).catch(() => undefined);
    }
    heal?.();
    heal = undefined;
  }
  const texts: string[] = answers.flatMap((settled) => (settled.ok ? settled.outcome.texts : [settled.error.message]));
  const mayFail = fault.mayFailInFlight?.includes(context) ?? false;
  for (const settled of answers) {
    // (A call with no answer at all is caught below, by the answer count.)
    if (!settled.ok && !mayFail) failures.push(`a call failed: ${settled.error.message}`);
    else if (settled.ok && settled.outcome.isError && !mayFail)
      failures.push(`a call was refused: ${describeSettled(settled)}`);
  }
  // The session is active again on the same notebook, with no call from the agent to fix it.
  try {
    await waitFor(
      'the session to be active on the same notebook',
      async () => {
        const status = await s.call('session_status');
        const active = status.json?.active as
          | { notebook_id?: string; daemon_incarnation?: { pid?: number } | null }
          | null
          | undefined;
        const daemon = status.json?.daemon as { live?: unknown; pid?: number } | undefined;
        // Active on the same notebook, bound to the daemon that runs now (not a stale session of a dead one).
        if (
          active?.notebook_id === row.notebookId &&
          daemon?.live === true &&
          active.daemon_incarnation?.pid === daemon.pid &&
          daemon.pid === s.pids.daemon()
        ) {
          return true;
        }
        throw new Error(
          `active=${JSON.stringify(active ?? null)} daemon=${JSON.stringify(daemon)} last_drop=${JSON.stringify(status.json?.last_drop)}`,
        );
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
  } catch (error) {
    failures.push(`not active again: ${(error as Error).message}`);
  }

  // Kernel state: kept when the kernel survived; a new kernel is announced when it did not.
  // The value is read back in words: a bare number can turn up by chance among the answer's ids and
  // hashes (cell and execution ids, versions, the cells lost_state lists).
  const check = await sendEdit(row, `print('x is', x)  # check ${marker}`, true);
  const checkText = check.ok ? check.outcome.text : check.error.message;
  const survived = checkText.includes(`x is ${nonce}`);
  texts.push(checkText);
  const kernelSurvives =
    fault.kernelSurvives === 'with-the-daemon' ? s.pids.daemon() === daemonBefore : fault.kernelSurvives;
  if (kernelSurvives) {
    if (!survived) failures.push(`x lost: ${describeSettled(check)}`);
  } else {
    if (survived) failures.push(`x survived a fault that should have replaced the kernel: ${describeSettled(check)}`);
    if (!texts.some((text) => freshKernelNotice.test(text))) {
      failures.push(`no fresh-kernel message (print(x) answered: ${describeSettled(check)})`);
    }
  }

  // The cells equal the acknowledged edits: none lost, none doubled; also in the .ipynb on disk.
  const listed = await s.send('get_all_cells', { format: 'json' });
  const cells = listed.ok ? (listed.outcome.json?.cells as { source: string }[] | undefined) : undefined;
  if (!cells) failures.push(`get_all_cells failed: ${describeSettled(listed)}`);
  else {
    const live = cells.map((entry) => entry.source);
    for (const edit of row.edits) {
      const count = live.filter((entry) => entry === edit.source).length;
      if (edit.acked && count !== 1)
        failures.push(`acknowledged cell ${JSON.stringify(edit.source.split('\n')[0])} ×${count}`);
      if (!edit.acked && count > 1)
        failures.push(`unacknowledged cell ${JSON.stringify(edit.source.split('\n')[0])} ×${count}`);
      // Never an error for something that happened, unless the agent was told the outcome is unknown.
      if (!edit.acked && count === 1 && !edit.unknown && !(fault.mayFailInFlight?.includes(context) ?? false))
        failures.push(`an error answered an edit that was made: ${JSON.stringify(edit.source.split('\n')[0])}`);
    }
    const known = new Set(row.edits.map((edit) => edit.source));
    const strangers = live.filter((entry) => !known.has(entry));
    if (strangers.length > 0) failures.push(`cells nobody created: ${JSON.stringify(strangers)}`);
    try {
      await waitFor(
        'the .ipynb on disk to hold the same cells',
        () => {
          const disk = readNotebookFile(row.notebookPath).map((entry) => entry.source);
          if (JSON.stringify(disk) === JSON.stringify(live)) return true;
          throw new Error(`disk has ${disk.length} cells, live ${live.length}`);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
    } catch (error) {
      failures.push(`saved file differs: ${(error as Error).message}`);
    }
  }

  // The agent was told what happened: in an answer (what the server added to any answer counts),
  // or in session_status now.
  texts.push(...s.transport.news().slice(firstNews));
  if (fault.told && !texts.some((text) => fault.told?.test(text))) {
    const status = await s.send('session_status');
    const statusText = status.ok ? status.outcome.text : status.error.message;
    if (!fault.told.test(statusText)) failures.push(`the agent was not told (${String(fault.told)})`);
  }

  // The execution ran once.
  if (context === 'exec') {
    const lines = runLines(row, marker);
    if (lines !== 1) failures.push(`the execution ran ${lines} times`);
  }

  heal?.();
  // The fault really happened.
  const firings = s.faults
    .fired()
    .slice(firstFiring)
    .filter((entry) => entry.hook === fault.hook && entry.point !== 'armed-before-reply');
  if (fault.hook === 'child-kill' && firings.length !== 1) failures.push(`the hook fired ${firings.length} times`);
  if (fault.hook !== undefined && firings.length === 0) failures.push(`the ${fault.hook} hook did not fire`);

  // Every request of this cell got exactly one answer.
  failures.push(...answerCountFailures(s, firstRequest));
  return failures;
}

async function runRow(fault: Fault, row: number): Promise<void> {
  let open: RowSession | undefined;
  try {
    for (const [index, context] of contexts.entries()) {
      if (!contextsOf(fault).includes(context)) continue;
      const cell = row * 3 + index;
      const started = Date.now();
      const seconds = () => Math.round((Date.now() - started) / 1000);
      try {
        open ??= await openRow(row);
        const failures = await runCell(open, fault, context, cell);
        results.set(key(fault, context), { failures, seconds: seconds() });
        if (full || failures.length > 0) {
          await open.session.stop();
          open = undefined;
        }
      } catch (error) {
        results.set(key(fault, context), {
          failures: [`cell aborted: ${(error as Error).message}`],
          seconds: seconds(),
        });
        await open?.session.stop();
        open = undefined;
      }
    }
  } finally {
    await open?.session.stop();
  }
}

beforeAll(async () => {
  const queue = selected.map((fault) => ({ fault, row: faults.indexOf(fault) }));
  const workers = Array.from({ length: rowConcurrency }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await runRow(next.fault, next.row);
  });
  await Promise.all(workers);
}, 1_500_000);

afterAll(() => {
  const width = Math.max(...faults.map((fault) => fault.name.length));
  const cellText = (result: CellResult | undefined): string => {
    if (!result) return '✗ not run';
    if (result.failures.length === 0) return '✓';
    const first = result.failures[0] ?? '';
    const short = first.length > 48 ? `${first.slice(0, 47)}…` : first;
    return `✗ ${short}${result.failures.length > 1 ? ` (+${result.failures.length - 1})` : ''}`;
  };
  const lines = [
    `${'fault'.padEnd(width)} | ${contexts.map((context) => contextTitles[context]).join(' | ')}`,
    `${'-'.repeat(width)}-|-${contexts.map((context) => '-'.repeat(contextTitles[context].length)).join('-|-')}`,
  ];
  for (const fault of selected) {
    lines.push(
      `${fault.name.padEnd(width)} | ${contexts.map((context) => (contextsOf(fault).includes(context) ? cellText(results.get(key(fault, context))).replace(/\|/g, '/') : '—')).join(' | ')}`,
    );
  }
  const details: string[] = [];
  for (const fault of selected) {
    for (const context of contextsOf(fault)) {
      const result = results.get(key(fault, context));
      details.push(
        `${fault.name} × ${contextTitles[context]} (${result?.seconds ?? '?'} s): ${result && result.failures.length === 0 ? '✓' : ''}`,
      );
      for (const failure of result?.failures ?? ['not run']) details.push(`    ✗ ${failure}`);
    }
  }
  console.log(
    `\nFault matrix (${full ? 'a session per cell' : 'a session per row'}):\n${lines.join('\n')}\n\nDetails:\n${details.join('\n')}\n`,
  );
});

describe('fault matrix through the real proxy, child and daemon', () => {
  for (const fault of selected) {
    for (const context of contextsOf(fault)) {
      it(`${fault.name} × ${contextTitles[context]}`, () => {
        expect(results.get(key(fault, context))?.failures).toEqual([]);
      });
    }
  }
});
