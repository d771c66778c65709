import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  childrenOf,
  createUserEnvironment,
  faultHooksModule,
  isAlive,
  nativeRawRequests,
  shippedBins,
  spawnShippedProxy,
  type UserEnvironment,
  waitFor,
} from './support/index.js';

// Executions as MCP tasks, and the kernel's input() asked of the person, through the shipped
// nteract-mcp driven by the independent v2 client (@modelcontextprotocol/client 2.4.0):
// - legacy era (2025-11-25 task augmentation): a task on a 20 s cell outlives a SIGKILL of the
//   child and then a daemon restart (made after the cell finished: the daemon journaled its end);
//   tasks/result gives the cell's output, once. A daemon killed mid-run: the task fails, saying why.
// - input("name? ") answered through elicitation/create appears in the cell's output.
// - 2026-07-28 era (the tasks extension): execute_cell answers a task; its input() is the task's
//   input_required status, answered with tasks/update.

/** A subclass of the stdio transport: the v2 client then runs its era probe on this process (no sibling spawn). */
class InPlace extends StdioClientTransport {}

const anyResult = z.looseObject({});
type Json = Record<string, unknown>;

interface Peer {
  readonly client: Client;
  readonly environment: UserEnvironment;
  /** The elicitations the client was asked, in order. */
  readonly asked: Json[];
  /** How the person answers a confirmation (`confirm` in the requested schema). */
  confirms: boolean;
  /** The notifications the client got that it has no handler of its own for (`notifications/tasks/status`). */
  readonly notices: Json[];
  call(name: string, args?: Json): Promise<{ text: string; isError: boolean; json: Json | undefined }>;
  request(method: string, params: Json): Promise<Json>;
  /**
   * A 2026-07-28 request sent on the transport past the client (with the envelope the client
   * would add): the v2 client 2.4.0 has no task runtime and refuses a `resultType: 'task'` answer.
   */
  raw(method: string, params: Json): Promise<Json>;
  childPid(): number | undefined;
  stderr(): string;
  stop(): Promise<void>;
}

const peers: Peer[] = [];
afterEach(async () => {
  for (const peer of peers.splice(0)) await peer.stop();
});

/** The shipped proxy in a fresh user environment, driven by the v2 client in `era`, which answers elicitations with `answer`. */
async function startPeer(
  era: 'legacy' | 'native',
  answer: string,
  faultHooks = false,
  declareTasks = true,
): Promise<Peer> {
  const environment = createUserEnvironment(shippedBins.runtimed, faultHooks ? { hooksModule: faultHooksModule } : {});
  const { transport, stderr } = spawnShippedProxy(era === 'legacy' ? StdioClientTransport : InPlace, {
    env: environment.env,
    cwd: environment.dirs.project,
  });
  const client = new Client(
    { name: 'v2-tasks', version: '2.4.0' },
    {
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
      capabilities: {
        elicitation: { form: {} },
        ...(era === 'native' && declareTasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {}),
      },
    },
  );
  const asked: Json[] = [];
  const notices: Json[] = [];
  client.fallbackNotificationHandler = async (notification) => {
    notices.push(notification as unknown as Json);
  };
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as Json;
    asked.push(params);
    const fields = (params.requestedSchema as { properties?: Json } | undefined)?.properties ?? {};
    const content: Record<string, string | boolean> = 'confirm' in fields ? { confirm: true } : { value: answer };
    const action: 'accept' | 'decline' = 'confirm' in fields && !peer.confirms ? 'decline' : 'accept';
    return { action, content };
  });
  const childPid = (): number | undefined => {
    const proxy = transport.pid;
    if (proxy === null) return undefined;
    return childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
  };
  let stopped: Promise<void> | undefined;
  let sendRaw: ((method: string, params: Json) => Promise<Json>) | undefined;
  const peer: Peer = {
    client,
    environment,
    asked,
    notices,
    confirms: true,
    call: async (name, args = {}) => {
      const raw = (await client.callTool({ name, arguments: args }, { timeout: 180_000 })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
      };
      const texts = (raw.content ?? []).filter((item) => item.type === 'text').map((item) => item.text ?? '');
      const jsonText = texts.find((text) => text.trimStart().startsWith('{'));
      return {
        text: texts.join('\n'),
        isError: raw.isError === true,
        json: jsonText ? JSON.parse(jsonText) : undefined,
      };
    },
    request: (method, params) => client.request({ method, params } as never, anyResult, { timeout: 180_000 }),
    raw: (method, params) => {
      if (!sendRaw) throw new Error('the v2 client is not connected yet');
      return sendRaw(method, params);
    },
    childPid,
    stderr,
    stop: () => {
      stopped ??= (async () => {
        const started = [transport.pid, childPid()].filter((pid): pid is number => typeof pid === 'number');
        await client.close().catch(() => undefined);
        for (const pid of started) {
          await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
            if (isAlive(pid)) process.kill(pid, 'SIGKILL');
          });
        }
        await environment.cleanup();
      })();
      return stopped;
    },
  };
  peers.push(peer);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the v2 client (${era}) did not connect: ${(error as Error).message}\n${stderr()}`);
  }
  // Answers to `raw` requests are taken before the client sees them.
  sendRaw = nativeRawRequests(transport, {
    clientCapabilities: { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    clientInfo: { name: 'v2-tasks', version: '2.4.0' },
  });
  return peer;
}

/** A notebook saved as `tasks.ipynb` in the project (so it survives a daemon restart) with one code cell `source`. */
async function notebookWithCell(peer: Peer, source: string): Promise<{ cellId: string; path: string }> {
  const created = await peer.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
  const cell = await peer.call('create_cell', { source });
  expect(cell.isError, cell.text).toBe(false);
  const path = join(peer.environment.dirs.project, 'tasks.ipynb');
  const saved = await peer.call('save_notebook', { path });
  expect(saved.isError, saved.text).toBe(false);
  return { cellId: String(cell.json?.cell_id), path };
}

/** The text of the notebook file, or '' while it cannot be read. */
function fileText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** SIGKILLs the peer's child (or, `SIGUSR2` with the fault hooks, makes it exit 75) and waits for the proxy's next one. */
async function killChild(peer: Peer, signal: 'SIGKILL' | 'SIGUSR2' = 'SIGKILL'): Promise<void> {
  const pid = await waitFor('the child', () => peer.childPid());
  process.kill(pid, signal);
  await waitFor('a new child', () => {
    const next = peer.childPid();
    return next !== undefined && next !== pid ? next : undefined;
  });
}

/** Polls tasks/get until `done(task)`; the last answer (a time-out names the last one seen). */
async function taskWhen(peer: Peer, taskId: string, what: string, done: (task: Json) => boolean): Promise<Json> {
  let last: unknown;
  try {
    return await waitFor(
      what,
      async () => {
        last = await peer.request('tasks/get', { taskId });
        return done(last as Json) ? (last as Json) : undefined;
      },
      { timeoutMs: 120_000 },
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}; last tasks/get: ${JSON.stringify(last)}\n${peer.stderr().slice(-4000)}`,
    );
  }
}

function textOf(result: Json): string {
  const content = Array.isArray(result.content) ? (result.content as { text?: string }[]) : [];
  return content.map((item) => item.text ?? '').join('\n');
}

describe('executions as MCP tasks, and input() asked of the person', () => {
  it('legacy era: a task on a 20 s cell outlives a SIGKILL of the child, an exit 75 and a daemon restart; tasks/result gives its output once', {
    timeout: 300_000,
  }, async () => {
    const peer = await startPeer('legacy', 'unused', true);
    const capabilities = peer.client.getServerCapabilities() as Json;
    expect(capabilities.tasks).toMatchObject({ cancel: {}, list: {}, requests: { tools: { call: {} } } });
    const { tools } = await peer.client.listTools();
    expect(tools.find((tool) => tool.name === 'execute_cell')?.execution).toEqual({ taskSupport: 'optional' });
    const { cellId, path } = await notebookWithCell(peer, "import time\ntime.sleep(20)\nprint('slept', 20, 's')");

    const created = await peer.request('tools/call', {
      name: 'execute_cell',
      arguments: { cell_id: cellId },
      task: { ttl: 600_000 },
    });
    const task = created.task as Json;
    expect(task).toMatchObject({ status: 'working', taskId: expect.any(String), pollInterval: expect.any(Number) });
    const taskId = String(task.taskId);
    // The task id is the daemon's execution id: get_results reads the same execution.
    const running = await peer.call('get_results', { execution_id: taskId });
    expect(running.json).toMatchObject({ cell_id: cellId, status: expect.stringMatching(/queued|running/) });
    expect((await peer.request('tasks/list', {})).tasks).toEqual([expect.objectContaining({ taskId })]);

    // The child dies mid-run; the next one is not asked about the task until the daemon restarted:
    // what it answers comes from the daemon (its journal), not from anything a child kept.
    await killChild(peer);
    await waitFor('the cell to finish (its output saved in the file)', () => fileText(path).includes('slept 20 s'), {
      timeoutMs: 120_000,
    });
    // And an upgrade handoff: that child exits 75, the proxy starts the next at once.
    await killChild(peer, 'SIGUSR2');
    expect(peer.stderr()).toMatch(/child exited.*"exitClass":"handoff"/);

    // The daemon restarts after the cell finished: its journal kept how the execution ended.
    const before = peer.environment.daemonPid();
    const stopped = await peer.environment.runtimed(['stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    await waitFor('the child to bring a new daemon up', () => {
      const pid = peer.environment.daemonPid();
      return pid !== undefined && pid !== before ? pid : undefined;
    });
    const result = await peer.request('tasks/result', { taskId });
    const text = textOf(result);
    expect(result.isError).not.toBe(true);
    expect(text.split('slept 20 s').length - 1, text).toBe(1);
    expect(JSON.parse(text)).toMatchObject({ execution_id: taskId, status: 'done' });
    expect((result._meta as Json)['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    expect(await peer.request('tasks/get', { taskId })).toMatchObject({ status: 'completed' });
  });

  it('legacy era: tasks/list lists the tasks the client created with earlier children, newest last, as the daemon has them (issue 46, 6)', {
    timeout: 300_000,
  }, async () => {
    const peer = await startPeer('legacy', 'unused');
    const release = join(peer.environment.dirs.project, 'release');
    const { cellId } = await notebookWithCell(
      peer,
      `import os, time\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.1)\nprint('released')`,
    );
    const start = async (name: string, args: Json): Promise<string> => {
      const created = await peer.request('tools/call', { name, arguments: args, task: {} });
      return String((created.task as Json).taskId);
    };
    /** The client's tasks/list once it names `taskIds` (a new child reads them after its rejoin). */
    const listed = (taskIds: readonly string[], what: string, done: (tasks: Json[]) => boolean = () => true) =>
      waitFor(
        what,
        async () => {
          const tasks = (await peer.request('tasks/list', {})).tasks as Json[];
          const same = JSON.stringify(tasks.map((task) => task.taskId)) === JSON.stringify(taskIds);
          return same && done(tasks) ? tasks : undefined;
        },
        { timeoutMs: 60_000 },
      );
    const held = await start('execute_cell', { cell_id: cellId });
    const queued = await start('run_code', { code: "print('after')" });
    await listed([held, queued], 'the first child to list both tasks');

    // A new child knows of them only what the proxy handed over: their ids.
    await killChild(peer);
    const afterKill = await listed([held, queued], 'the next child to list the tasks of the first');
    expect(afterKill[0]).toMatchObject({ taskId: held, status: 'working' });
    const third = await start('run_code', { code: "print('third')" });
    await killChild(peer);
    await listed([held, queued, third], 'a third child to list the tasks of both before it');

    // Their status is the daemon's: the held cell ends once released, and the list says so.
    writeFileSync(release, '');
    const ended = await listed([held, queued, third], 'every task to complete', (tasks) =>
      tasks.every((task) => task.status === 'completed'),
    );
    expect(ended).toHaveLength(3);
    expect(textOf(await peer.request('tasks/result', { taskId: held }))).toContain('released');
  });

  it('legacy era: a task whose daemon is killed mid-run fails, saying why; a cancelled one stops its execution', {
    timeout: 300_000,
  }, async () => {
    const peer = await startPeer('legacy', 'unused');
    const { cellId } = await notebookWithCell(peer, "import time\nprint('started', flush=True)\ntime.sleep(120)");
    const created = await peer.request('tools/call', {
      name: 'execute_cell',
      arguments: { cell_id: cellId },
      task: {},
    });
    const taskId = String((created.task as Json).taskId);
    await taskWhen(peer, taskId, 'the cell to print', (polled) => /1 output/.test(String(polled.statusMessage)));
    const daemon = await waitFor('the daemon', () => peer.environment.daemonPid());
    process.kill(daemon, 'SIGKILL');
    const failed = await taskWhen(peer, taskId, 'the task to fail', (polled) => polled.status === 'failed');
    expect(failed.statusMessage).toMatch(/DaemonRestarted/);
    const result = await peer.request('tasks/result', { taskId });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('The daemon stopped while this execution ran');

    // tasks/cancel: the kernel is interrupted; the task stays cancelled.
    const again = await peer.request('tools/call', { name: 'execute_cell', arguments: { cell_id: cellId }, task: {} });
    const second = String((again.task as Json).taskId);
    await taskWhen(peer, second, 'the cell to run', (polled) => /running/.test(String(polled.statusMessage)));
    expect(await peer.request('tasks/cancel', { taskId: second })).toMatchObject({
      taskId: second,
      status: 'cancelled',
    });
    await waitFor('the execution to stop', async () => {
      const read = await peer.call('get_results', { execution_id: second });
      return read.json?.status === 'error' || read.json?.status === 'aborted' ? read : undefined;
    });
    expect(await peer.request('tasks/get', { taskId: second })).toMatchObject({ status: 'cancelled' });
  });

  it('legacy era: run_code and run_all_cells run as tasks too; a run of all cells stops at the first error', {
    timeout: 180_000,
  }, async () => {
    const peer = await startPeer('legacy', 'unused');
    await notebookWithCell(peer, 'a = 20');
    for (const source of ['print(a + 1)', 'raise ValueError("stop here")', 'print("never" * 2)']) {
      const cell = await peer.call('create_cell', { source });
      expect(cell.isError, cell.text).toBe(false);
    }
    const all = await peer.request('tools/call', { name: 'run_all_cells', arguments: {}, task: {} });
    const allId = String((all.task as Json).taskId);
    expect(allId).toMatch(/^run_all_cells:/);
    const allResult = textOf(await peer.request('tasks/result', { taskId: allId }));
    expect(allResult).toContain('21');
    expect(allResult).toContain('stop here');
    expect(allResult).not.toContain('nevernever');
    // The child that started it followed it, and said when its status changed.
    await waitFor('the status notice', () =>
      peer.notices.find(
        (notice) =>
          notice.method === 'notifications/tasks/status' &&
          (notice.params as Json).taskId === allId &&
          (notice.params as Json).status === 'completed',
      ),
    );

    const scratch = await peer.request('tools/call', {
      name: 'run_code',
      arguments: { code: 'import time\ntime.sleep(1)\nprint(a * 2)' },
      task: {},
    });
    const scratchId = String((scratch.task as Json).taskId);
    const scratchResult = textOf(await peer.request('tasks/result', { taskId: scratchId }));
    expect(JSON.parse(scratchResult)).toMatchObject({ cell_id: 'scratch', status: 'done' });
    expect(scratchResult).toContain('40');
  });

  it('legacy era: input("name? ") is asked of the person with elicitation/create; the answer is in the output', {
    timeout: 180_000,
  }, async () => {
    const peer = await startPeer('legacy', 'Ada');
    const { cellId } = await notebookWithCell(peer, 'name = input("name? ")\nprint("hello", name)');
    const run = await peer.call('execute_cell', { cell_id: cellId });
    expect(run.isError, run.text).toBe(false);
    expect(run.json).toMatchObject({ status: 'done' });
    expect(run.text).toContain('hello Ada');
    expect(peer.asked).toEqual([
      expect.objectContaining({ message: expect.stringContaining('name?'), requestedSchema: expect.any(Object) }),
    ]);
    // The answer reached the kernel only: no log line carries it.
    expect(peer.stderr()).not.toContain('Ada');
  });

  it('restart_kernel on a kernel that ran code asks the person first, in both eras; declined, nothing changes', {
    timeout: 180_000,
  }, async () => {
    for (const era of ['legacy', 'native'] as const) {
      const peer = await startPeer(era, 'unused');
      const created = await peer.call('create_notebook', {});
      expect(created.isError, created.text).toBe(false);
      const ran = await peer.call('create_cell', { source: 'kept = 7', and_run: true });
      expect(ran.isError, ran.text).toBe(false);
      peer.confirms = false;
      const declined = await peer.call('restart_kernel', {});
      expect(declined.text).toContain('the person did not confirm restart_kernel');
      expect(peer.asked).toEqual([expect.objectContaining({ message: expect.stringContaining('restart the kernel') })]);
      const still = await peer.call('run_code', { code: 'print(kept)' });
      expect(still.text, era).toContain('7');
      peer.confirms = true;
      const restarted = await peer.call('restart_kernel', {});
      expect(restarted.json, era).toMatchObject({ restarted: true });
      expect(peer.asked).toHaveLength(2);
      await peer.stop();
    }
  });

  it('2026-07-28 era: execute_cell answers a task; input() is its input_required status, answered with tasks/update', {
    timeout: 180_000,
  }, async () => {
    const peer = await startPeer('native', 'unused');
    expect(peer.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { cellId } = await notebookWithCell(
      peer,
      'import time\nname = input("name? ")\ntime.sleep(3)\nprint("hello", name)',
    );
    const created = await peer.raw('tools/call', { name: 'execute_cell', arguments: { cell_id: cellId } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null });
    const taskId = String(created.taskId);
    // A listen stream naming the task gets its status notifications (the whole task), tagged with the stream.
    void peer.raw('subscriptions/listen', { notifications: { taskIds: [taskId] } }).catch(() => undefined);
    const waiting = await taskWhen(peer, taskId, 'the input request', (polled) => polled.status === 'input_required');
    const requests = waiting.inputRequests as Record<string, { method: string; params: Json }>;
    const [key, request] = Object.entries(requests)[0] ?? [];
    expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } });
    expect(String(request?.params.message)).toContain('name?');
    // An empty acknowledgement (the client strips its resultType).
    await peer.request('tasks/update', {
      taskId,
      inputResponses: { [String(key)]: { action: 'accept', content: { value: 'Grace' } } },
    });
    const done = await taskWhen(peer, taskId, 'the task to complete', (polled) => polled.status === 'completed');
    expect(textOf(done.result as Json)).toContain('hello Grace');
    const told = await waitFor('the notifications/tasks of its end', () =>
      peer.notices.find(
        (notice) => notice.method === 'notifications/tasks' && (notice.params as Json).status === 'completed',
      ),
    );
    const params = told.params as Json;
    expect(params).toMatchObject({ taskId, _meta: { 'io.modelcontextprotocol/subscriptionId': expect.any(String) } });
    expect(textOf(params.result as Json)).toContain('hello Grace');
    // Nothing of the 2025 era's came unsolicited.
    expect(peer.notices.filter((notice) => notice.method === 'notifications/tasks/status')).toEqual([]);
    // A method of the other era is not served.
    await expect(peer.raw('tasks/result', { taskId })).rejects.toThrow(
      /not part of this protocol era|Method not found/,
    );
  });

  it('2026-07-28 era without tasks: input() answers the call input_required; the client’s retry carries the line to the kernel', {
    timeout: 180_000,
  }, async () => {
    const peer = await startPeer('native', 'Ada', false, false);
    const { cellId } = await notebookWithCell(peer, 'name = input("name? ")\nprint("hello", name)');
    // The v2 client fulfils the input_required answer with its elicitation handler and retries.
    const run = await peer.call('execute_cell', { cell_id: cellId });
    expect(run.isError, run.text).toBe(false);
    expect(run.json).toMatchObject({ cell_id: cellId, status: 'done' });
    expect(run.text).toContain('hello Ada');
    expect(peer.asked).toEqual([expect.objectContaining({ message: expect.stringContaining('name?') })]);
    // One run of the cell: the retry went on with the first execution.
    const cells = await peer.call('get_all_cells', { format: 'json' });
    expect((cells.json?.cells as Json[] | undefined)?.[0]).toMatchObject({ cell_id: cellId, execution_count: 1 });
  });
});
