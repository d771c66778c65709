import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CellOutput, CoreError, DaemonPort, Logger, type NotebookHandle } from '@nteract-mcp/core';
import { createTestContainer, RecordingLogger } from '@nteract-mcp/core/testing';
import type { RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { DaemonStarter } from './daemon-starter.js';
import type { LocalDaemonOptions } from './local-daemon-options.js';
import { RuntimedDaemonPort } from './runtimed-daemon-port.js';
import { RuntimedNotebookHandle } from './runtimed-notebook-handle.js';
import { type RuntimedScript, type ScriptedPeer, scriptedRuntimedDaemon } from './testing/scripted-runtimed-daemon.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rtd-unit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function portFor(socketPath: string, options: LocalDaemonOptions = {}): DaemonPort {
  return createTestContainer({ plugins: [createLocalDaemonPlugin({ socketPath, ...options })] })
    .override(Logger, new RecordingLogger())
    .build()
    .get(DaemonPort);
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

/** An in-process stand-in for runtimed that speaks the framing and follows a script. */
async function scriptedDaemon(script: RuntimedScript): Promise<{ socketPath: string; requests: RuntimedFrame[] }> {
  const socketPath = join(scratchDir(), 'd.sock');
  const daemon = await scriptedRuntimedDaemon(socketPath, script);
  cleanups.push(() => daemon.stop());
  return { socketPath, requests: daemon.requests };
}

const startedAt = '2026-01-01T00:00:00.000Z';
const hello = { type: 'hello', pid: 4242, started_at: startedAt, version: '9.9.9', protocol_version: 1 };

function greeting(fields: Record<string, unknown> = {}): RuntimedFrame {
  return {
    type: 'connected',
    notebook_id: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
    notebook_path: null,
    ephemeral: true,
    document_version: 0,
    cells: [],
    runtime: { state: 'ready', kernel_status: 'idle' },
    peer_id: 'p1',
    daemon_pid: 4242,
    daemon_started_at: startedAt,
    ...fields,
  };
}

function wireCell(id: string, source: string): RuntimedFrame {
  return { id, cell_type: 'code', source, outputs: [], execution_count: null, metadata: {} };
}

const peer = { peerLabel: 'unit' };

describe(RuntimedDaemonPort, () => {
  it('is what the plugin binds to DaemonPort, also from the tsup build (no decorator metadata)', async () => {
    expect(portFor('/nowhere/d.sock')).toBeInstanceOf(RuntimedDaemonPort);
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer, DaemonPort: BuiltDaemonPort } = await import('@nteract-mcp/core');
    const container = createMcpContainer({ plugins: [built.createLocalDaemonPlugin({ socketPath: '/x/d.sock' })] });
    const port = container.get(BuiltDaemonPort);
    expect(port).toBeInstanceOf(built.RuntimedDaemonPort);
    expect(container.get(BuiltDaemonPort)).toBe(port);
    expect(await port.queryInfo()).toMatchObject({ kind: 'absent' });
  });

  it('is also the DaemonStarter (one instance), which honours autoStart: false', async () => {
    const container = createTestContainer({
      plugins: [createLocalDaemonPlugin({ socketPath: join(scratchDir(), 'd.sock'), autoStart: false })],
    })
      .override(Logger, new RecordingLogger())
      .build();
    const starter = container.get(DaemonStarter);
    expect(starter).toBe(container.get(DaemonPort));
    expect(starter.enabled).toBe(false);
    const refused = await rejection(starter.start());
    expect(refused.kind).toBe('daemonUnavailable');
    expect(refused.message).toContain('not configured');
    const configured = createTestContainer({
      plugins: [createLocalDaemonPlugin({ socketPath: '/x/d.sock', autoStart: { command: 'runtimed', args: [] } })],
    }).build();
    expect(configured.get(DaemonStarter).enabled).toBe(true);
  });

  it('lists no rooms when no daemon runs, and starts none for it (an agent on hosted notebooks only)', async () => {
    const dir = scratchDir();
    const marker = join(dir, 'started');
    const port = portFor(join(dir, 'd.sock'), {
      autoStart: {
        command: process.execPath,
        args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, '')`],
      },
    });
    expect(await port.listRooms()).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    // The start it would have run does run (the check can fail).
    void port.openNotebook(join(dir, 'a.ipynb'), peer).catch(() => undefined);
    await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 4000 });
  });

  describe('.queryInfo', () => {
    it('answers absent when a path component is not a directory', async () => {
      const dir = scratchDir();
      writeFileSync(join(dir, 'file'), '');
      expect(await portFor(join(dir, 'file', 'd.sock')).queryInfo()).toMatchObject({ kind: 'absent' });
    });

    it('rejects daemonQueryFailed, not absent, when the socket answers garbage', async () => {
      const socketPath = join(scratchDir(), 'junk.sock');
      const server = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.resume(); // read (and drop) what the client sends, so its close is noticed
        socket.end('HTTP/1.1 400 Bad Request\r\n\r\nthis is not runtimed');
      });
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      cleanups.push(() => new Promise((resolve) => server.close(resolve)));
      const error = await rejection(portFor(socketPath).queryInfo());
      expect(error.kind).toBe('daemonQueryFailed');
      expect(error.message).toContain(socketPath);
    });

    it('rejects daemonQueryFailed when the daemon greets but never answers', async () => {
      const { socketPath } = await scriptedDaemon({ onHandshake: (connection) => connection.send(hello) });
      const error = await rejection(portFor(socketPath, { connectTimeoutMs: 200 }).queryInfo());
      expect(error.kind).toBe('daemonQueryFailed');
      expect(error.message).toContain("did not answer 'get_daemon_info' within 200 ms");
    });

    it('rejects daemonQueryFailed when the daemon names an impossible identity', async () => {
      const { socketPath } = await scriptedDaemon({
        onHandshake: (connection) => connection.send(hello),
        onRequest: (request, connection) =>
          connection.send({ ...hello, pid: -1, type: 'ok', id: request.id as number }),
      });
      const error = await rejection(portFor(socketPath).queryInfo());
      expect(error.kind).toBe('daemonQueryFailed');
      expect(error.message).toContain('pid');
    });
  });

  describe('.page', () => {
    const notebookId = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';

    it("asks get_page for the notebook and gives the answer's launch address, a new one each time", async () => {
      let launches = 0;
      const { socketPath, requests } = await scriptedDaemon({
        onHandshake: (connection) => connection.send(hello),
        onRequest: (request, connection) => {
          const path = request.notebook_id === undefined ? '' : `notebooks/${String(request.notebook_id)}`;
          connection.send({
            type: 'ok',
            id: request.id as number,
            url: 'http://127.0.0.1:8765/',
            launch_url: `http://127.0.0.1:8765/${path}#launch=code-${++launches}`,
          });
        },
      });
      const port = portFor(socketPath);
      expect(await port.page?.(notebookId)).toEqual({
        url: 'http://127.0.0.1:8765/',
        launchUrl: `http://127.0.0.1:8765/notebooks/${notebookId}#launch=code-1`,
      });
      expect(await port.page?.()).toEqual({
        url: 'http://127.0.0.1:8765/',
        launchUrl: 'http://127.0.0.1:8765/#launch=code-2',
      });
      expect(requests).toEqual([
        { type: 'get_page', notebook_id: notebookId, id: expect.any(Number) },
        { type: 'get_page', id: expect.any(Number) },
      ]);
    });

    it('gives no launch address, and never the token, from a daemon older than launch addresses; nothing when it serves no page', async () => {
      const older = await scriptedDaemon({
        onHandshake: (connection) => connection.send(hello),
        onRequest: (request, connection) =>
          connection.send({
            type: 'ok',
            id: request.id as number,
            url: 'http://127.0.0.1:8765/',
            token: 'f'.repeat(64),
          }),
      });
      const page = await portFor(older.socketPath).page?.(notebookId);
      expect(page).toEqual({ url: 'http://127.0.0.1:8765/', launchUrl: undefined });
      expect(JSON.stringify(page)).not.toContain('f'.repeat(64));
      const none = await scriptedDaemon({
        onHandshake: (connection) => connection.send(hello),
        onRequest: (request, connection) =>
          connection.send({ type: 'ok', id: request.id as number, url: null, launch_url: null }),
      });
      expect(await portFor(none.socketPath).page?.(notebookId)).toBeUndefined();
    });
  });

  it('refuses a greeting that is not a notebook greeting with protocolViolation', async () => {
    const { socketPath } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ daemon_pid: 'x' })),
    });
    const error = await rejection(portFor(socketPath).openNotebook('/tmp/a.ipynb', peer));
    expect(error.kind).toBe('protocolViolation');
    expect(error.message).toBe(
      `The daemon sent an invalid notebook greeting: Field 'daemon_pid' must be a number, got "x"`,
    );
  });

  it('refuses an answer that breaks its schema with protocolViolation naming the field, and ignores unknown broadcasts', async () => {
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ cells: [wireCell('a', 'a')], document_version: 1 })),
      onRequest: (request, connection) => {
        const id = request.id as number;
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells') {
          connection.send({ type: 'ok', id, document_version: 1, cells: [wireCell('a', 'a')] });
        } else if (request.type === 'get_cell') {
          connection.send(
            // An event a newer daemon has: not a reason to distrust the cached cells.
            { type: 'broadcast', event: 'cell_teleported', document_version: 9 },
            { type: 'ok', id, cell: { ...wireCell('z', 'z'), cell_type: 'sql' } },
          );
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['a']);
    const error = await rejection(handle.getCell('z'));
    expect(error.kind).toBe('protocolViolation');
    expect(error.message).toBe(
      `The daemon sent an invalid get_cell answer: Field 'cell.cell_type' must be 'code', 'markdown' or 'raw', got "sql"`,
    );
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['a']);
    expect(requests.filter((request) => request.type === 'get_cells')).toHaveLength(1);
    expect(handle.isClosed).toBe(false);
  });

  it("sends the handshake of each mode in snake_case, with this client's cwd and kernel environment, asking for blob references and source edits", async () => {
    const handshakes: RuntimedFrame[] = [];
    const { socketPath } = await scriptedDaemon({
      onHandshake: (connection) => {
        handshakes.push(connection.handshake);
        connection.send(greeting());
      },
      onRequest: (request, connection) =>
        connection.send({
          type: 'ok',
          id: request.id as number,
          ...(request.type === 'get_runtime'
            ? { runtime: { state: 'ready', kernel_status: 'idle' } }
            : { document_version: 0, cells: [] }),
        }),
    });
    const port = portFor(socketPath, {
      cwd: '/client/project',
      kernelEnv: {
        PATH: '/bin',
        MY_VAR: 'v',
        JUPYTER_TOKEN: 'tok',
        NTERACT_MCP_REJOIN_NOTEBOOK: 'x',
        UNSET: undefined,
      },
    });
    const client = { cwd: '/client/project', env: { PATH: '/bin', MY_VAR: 'v' } };
    const handles: NotebookHandle[] = [
      await port.openNotebook('/abs/a.ipynb', peer),
      await port.attachNotebook('0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90', peer),
      await port.createNotebook({ runtime: 'python', workingDir: '/abs', ephemeral: false, ...peer }),
    ];
    for (const handle of handles) await handle.close();
    expect(handshakes).toEqual([
      {
        channel: 'notebook',
        mode: 'open',
        path: '/abs/a.ipynb',
        peer_label: 'unit',
        client,
        blob_references: true,
        source_edits: true,
        comments: true,
      },
      {
        channel: 'notebook',
        mode: 'attach',
        notebook_id: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
        peer_label: 'unit',
        client,
        blob_references: true,
        source_edits: true,
        comments: true,
      },
      {
        channel: 'notebook',
        mode: 'create',
        runtime: 'python',
        working_dir: '/abs',
        ephemeral: false,
        peer_label: 'unit',
        client,
        blob_references: true,
        source_edits: true,
        comments: true,
      },
    ]);
  });
});

describe(RuntimedNotebookHandle, () => {
  it('catches up with frames that came in the same read as the greeting', async () => {
    let runtime: RuntimedFrame = { state: 'not_started', kernel_status: null };
    let cells = [wireCell('a', 'a')];
    const { socketPath } = await scriptedDaemon({
      onHandshake: (connection) => {
        runtime = { state: 'unavailable', kernel_status: null, reason: 'no ipykernel' };
        cells = [wireCell('a', 'a'), wireCell('b', 'b')];
        connection.send(
          greeting({ runtime: { state: 'not_started', kernel_status: null }, cells: [wireCell('a', 'a')] }),
          { type: 'broadcast', event: 'runtime', runtime: { state: 'starting', kernel_status: 'starting' } },
          { type: 'broadcast', event: 'cell_inserted', document_version: 1, index: 1, cell: wireCell('b', 'b') },
          { type: 'broadcast', event: 'runtime', runtime },
        );
      },
      onRequest: (request, connection) => {
        if (request.type === 'get_runtime') connection.send({ type: 'ok', id: request.id as number, runtime });
        if (request.type === 'get_cells') {
          connection.send({ type: 'ok', id: request.id as number, document_version: 1, cells });
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    expect(await handle.waitUntilReady()).toEqual({
      document: 'ready',
      runtime: 'unavailable',
      reason: 'no ipykernel',
    });
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual(['a', 'b']);
  });

  it('fetches the whole list again after a broadcast it cannot place', async () => {
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ cells: [wireCell('a', 'a')], document_version: 3 })),
      onRequest: (request, connection) => {
        const id = request.id as number;
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells' && requests.filter((r) => r.type === 'get_cells').length === 1) {
          connection.send({ type: 'ok', id, document_version: 3, cells: [wireCell('a', 'a')] });
        } else if (request.type === 'get_cells') {
          connection.send({ type: 'ok', id, document_version: 6, cells: [wireCell('a', 'a2'), wireCell('c', 'c')] });
        } else if (request.type === 'insert_cell') {
          // Version 4 went to someone else and we missed it; ours is 5, then a gap-free broadcast.
          connection.send(
            { type: 'ok', id, cell: wireCell('c', 'c'), index: 1, document_version: 5 },
            { type: 'broadcast', event: 'cell_updated', document_version: 6, cell: wireCell('a', 'a2') },
          );
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['a']);
    await handle.insertCell({ source: 'c', cellType: 'code' });
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['a2', 'c']);
    expect((await handle.listCells()).map((cell) => cell.source)).toEqual(['a2', 'c']);
    expect(requests.filter((request) => request.type === 'get_cells')).toHaveLength(2);
  });

  it("tells its change listeners each change once: another peer's broadcasts, its own answers (not again when broadcast), and a gap as what differs in the list fetched again, without a read", async () => {
    let daemonSide: ScriptedPeer | undefined;
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => {
        daemonSide = connection;
        connection.send(greeting({ cells: [wireCell('a', 'a')], document_version: 3 }));
      },
      onRequest: (request, connection) => {
        const id = request.id as number;
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells' && requests.filter((r) => r.type === 'get_cells').length === 1) {
          connection.send({ type: 'ok', id, document_version: 3, cells: [wireCell('a', 'a')] });
        } else if (request.type === 'get_cells') {
          connection.send({
            type: 'ok',
            id,
            document_version: 8,
            cells: [wireCell('d', 'd'), wireCell('a', 'a3'), wireCell('c', 'c')],
          });
        } else if (request.type === 'insert_cell') {
          // Our answer, then the room's broadcast of the same change.
          connection.send(
            { type: 'ok', id, cell: wireCell('c', 'c'), index: 1, document_version: 5 },
            { type: 'broadcast', event: 'cell_inserted', document_version: 5, index: 1, cell: wireCell('c', 'c') },
          );
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    await handle.listCells();
    const changes: unknown[] = [];
    const subscription = handle.onDidChangeCells?.((change) => changes.push(change));
    daemonSide?.send({ type: 'broadcast', event: 'cell_updated', document_version: 4, cell: wireCell('a', 'a1') });
    await expect.poll(() => changes).toEqual([{ kind: 'updated', cellId: 'a' }]);
    // A read from the listener on sees the change.
    expect((await handle.getCell('a')).source).toBe('a1');
    await handle.insertCell({ source: 'c', cellType: 'code' });
    // Version 6 and 7 went by unseen: the list is fetched again at once, and its differences told.
    daemonSide?.send({ type: 'broadcast', event: 'cell_updated', document_version: 8, cell: wireCell('a', 'a3') });
    await expect.poll(() => changes.length).toBe(4);
    expect(changes).toEqual([
      { kind: 'updated', cellId: 'a' },
      { kind: 'inserted', cellId: 'c' },
      { kind: 'inserted', cellId: 'd' },
      { kind: 'updated', cellId: 'a' },
    ]);
    expect(requests.filter((request) => request.type === 'get_cells')).toHaveLength(2);
    subscription?.dispose();
    daemonSide?.send({ type: 'broadcast', event: 'cell_deleted', document_version: 9, cell_id: 'd' });
    await expect.poll(async () => (await handle.listCells()).length).toBe(2);
    expect(changes).toHaveLength(4);
  });

  it('sees outputs and the end of an execution that arrive with its answer, and sends the idempotency key', async () => {
    const output = { output_type: 'stream', name: 'stdout', text: 'hi\n' };
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ cells: [wireCell('a', 'print("hi")')] })),
      onRequest: (request, connection) => {
        const id = request.id as number;
        const execution = { execution_id: 'e1', cell_id: 'a', execution_count: 1 };
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells') {
          connection.send({ type: 'ok', id, document_version: 0, cells: [wireCell('a', 'print("hi")')] });
        } else if (request.type === 'execute_cell') {
          connection.send(
            { type: 'ok', id, ...execution, status: 'queued', outputs: [], execution_count: null },
            { type: 'broadcast', event: 'execution_output', ...execution, output },
            { type: 'broadcast', event: 'execution_done', ...execution, status: 'ok' },
          );
        } else if (request.type === 'get_execution') {
          connection.send({ type: 'ok', id, ...execution, status: 'ok', outputs: [output] });
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    const seen: CellOutput[] = [];
    const result = await handle.executeCell('a', { idempotencyKey: 'key-1', onOutput: (item) => seen.push(item) });
    expect(result).toEqual({ executionId: 'e1', cellId: 'a', status: 'ok', outputs: [output], executionCount: 1 });
    expect(seen).toEqual([output]);
    expect(requests.find((request) => request.type === 'execute_cell')).toMatchObject({
      cell_id: 'a',
      idempotency_key: 'key-1',
    });
  });

  it("follows a running cell's output edits into its copy of the cell and the execution's result, reading nothing; a missed edit reads the cells again", async () => {
    const execution = { execution_id: 'e1', cell_id: 'a' };
    const edits: RuntimedFrame[] = [
      { type: 'broadcast', event: 'cell_updated', document_version: 1, cell: wireCell('a', 'train()') },
      {
        type: 'broadcast',
        event: 'output_set',
        document_version: 2,
        ...execution,
        seq: 1,
        index: 0,
        output: { output_type: 'stream', name: 'stdout', text: 'step 1\n' },
      },
      {
        type: 'broadcast',
        event: 'stream_appended',
        document_version: 3,
        ...execution,
        seq: 2,
        index: 0,
        keep: 7,
        text: 'step 2\n 50%\r',
      },
      {
        type: 'broadcast',
        event: 'stream_appended',
        document_version: 4,
        ...execution,
        seq: 3,
        index: 0,
        keep: 14,
        text: '100%\n',
      },
      {
        type: 'broadcast',
        event: 'execution_done',
        ...execution,
        status: 'ok',
        execution_count: 3,
        document_version: 5,
        output_events: 3,
      },
    ];
    const final = { output_type: 'stream', name: 'stdout', text: 'step 1\nstep 2\n100%\n' };
    let daemonSide: ScriptedPeer | undefined;
    let ran = false;
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => {
        daemonSide = connection;
        connection.send(greeting({ cells: [wireCell('a', 'train()')] }));
      },
      onRequest: (request, connection) => {
        const id = request.id as number;
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells') {
          // As the room stands: before the run, or after the edit the handle missed.
          connection.send(
            ran
              ? {
                  type: 'ok',
                  id,
                  document_version: 7,
                  cells: [{ ...wireCell('a', 'train()'), outputs: [final, final], execution_count: 4 }],
                }
              : { type: 'ok', id, document_version: 0, cells: [wireCell('a', 'train()')] },
          );
        } else if (request.type === 'execute_cell') {
          ran = true;
          connection.send({ type: 'ok', id, ...execution, status: 'queued', outputs: [], execution_count: null });
          setImmediate(() => connection.send(...edits));
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    await handle.listCells();
    const seen: unknown[] = [];
    const executed = await handle.executeCell('a', { onOutput: (output) => seen.push(output.text) });
    expect(executed).toEqual({ executionId: 'e1', cellId: 'a', status: 'ok', outputs: [final], executionCount: 3 });
    expect(seen).toEqual(['step 1\n', 'step 1\nstep 2\n 50%\r', 'step 1\nstep 2\n100%\n']);
    expect(await handle.getCell('a')).toMatchObject({ outputs: [final], executionCount: 3 });
    const read = () => requests.filter((request) => request.type === 'get_cells' || request.type === 'get_execution');
    const readsBefore = read().length;
    // Version 6 went by unseen: the copy is read again, never left behind.
    const changes: unknown[] = [];
    handle.onDidChangeCells?.((change) => changes.push(change));
    daemonSide?.send({ type: 'broadcast', event: 'outputs_cleared', document_version: 7, ...execution, seq: 4 });
    await expect.poll(() => read().length).toBe(readsBefore + 1);
    await expect.poll(async () => (await handle.getCell('a')).outputs).toEqual([final, final]);
  });

  it('makes one daemon round trip for an execution: the execute_cell frame out, its answer and broadcasts in, no get_execution', async () => {
    const output = { output_type: 'stream', name: 'stdout', text: 'hi\n' };
    const result = { output_type: 'execute_result', data: { 'text/plain': '42' }, metadata: {}, execution_count: 1 };
    const { socketPath, requests } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ cells: [wireCell('a', 'print("hi"); 42')] })),
      onRequest: (request, connection) => {
        const id = request.id as number;
        const execution = { execution_id: 'e1', cell_id: 'a' };
        if (request.type === 'get_runtime') {
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        } else if (request.type === 'get_cells') {
          connection.send({ type: 'ok', id, document_version: 0, cells: [wireCell('a', 'print("hi"); 42')] });
        } else if (request.type === 'execute_cell') {
          connection.send({ type: 'ok', id, ...execution, status: 'queued', outputs: [], execution_count: null });
          // Later, as a kernel would: the outputs, then the end with the final state.
          setImmediate(() =>
            connection.send(
              { type: 'broadcast', event: 'execution_output', ...execution, output },
              { type: 'broadcast', event: 'execution_output', ...execution, output: result },
              {
                type: 'broadcast',
                event: 'execution_done',
                ...execution,
                status: 'ok',
                execution_count: 1,
                outputs: [output, result],
              },
            ),
          );
        } else if (request.type === 'get_execution') {
          connection.send({
            type: 'ok',
            id,
            ...execution,
            status: 'ok',
            outputs: [output, result],
            execution_count: 1,
          });
        }
      },
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    cleanups.push(() => handle.close());
    const executed = await handle.executeCell('a', { idempotencyKey: 'key-1' });
    expect(executed).toEqual({
      executionId: 'e1',
      cellId: 'a',
      status: 'ok',
      outputs: [output, result],
      executionCount: 1,
    });
    // Execution frames sent to the daemon: the start only (the outputs came with the end).
    const executionFrames = requests.filter((request) => /execut/.test(String(request.type)));
    expect(executionFrames.map((request) => request.type)).toEqual(['execute_cell']);
  });

  it('rejects a readiness wait with the signal reason, and with handleClosed when the handle closes first', async () => {
    const { socketPath } = await scriptedDaemon({
      onHandshake: (connection) => connection.send(greeting({ runtime: { state: 'starting', kernel_status: null } })),
    });
    const handle = await portFor(socketPath).openNotebook('/abs/a.ipynb', peer);
    expect(handle.readiness()).toEqual({ document: 'ready', runtime: 'pending', reason: 'the kernel is starting' });
    const controller = new AbortController();
    const aborted = handle.waitUntilReady(controller.signal);
    controller.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    const closing = handle.waitUntilReady();
    const onClose = vi.fn();
    handle.onDidClose(onClose);
    const rejected = rejection(closing);
    await handle.close();
    expect((await rejected).kind).toBe('handleClosed');
    expect(onClose).toHaveBeenCalledExactlyOnceWith('closed');
  });
});
