import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import {
  encodeRuntimedFrame,
  type RuntimedConnection,
  RuntimedFrameDecoder,
  RuntimedProtocolError,
  runtimedPreamble,
  runtimedProtocolVersion,
  type WireRoomInfo,
} from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

const fast = ['--no-kernels', '--autosave-debounce-ms', '20', '--autosave-max-ms', '100'];
const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0).reverse()) await daemon.dispose();
});

async function daemon(args: readonly string[] = fast): Promise<TestDaemon> {
  const started = await startTestDaemon(args);
  daemons.push(started);
  return started;
}

async function peer(d: TestDaemon, handshake: Parameters<TestDaemon['connect']>[0]) {
  const opened = await d.connect(handshake);
  connections.push(opened.connection);
  return opened;
}

async function rooms(d: TestDaemon): Promise<WireRoomInfo[]> {
  return (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
}

async function until<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function rejection(promise: Promise<unknown>): Promise<RuntimedProtocolError> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => {
      if (!RuntimedProtocolError.is(error)) throw error;
      return error;
    },
  );
}

describe('runtimed (real process)', { timeout: 60_000 }, () => {
  it('reports the same identity to every query, and a new one after a restart', async () => {
    const d = await daemon();
    const first = await d.control({ type: 'get_daemon_info' });
    const second = await d.control({ type: 'get_daemon_info' });
    expect(second.started_at).toBe(first.started_at);
    expect(second.pid).toBe(first.pid);
    expect(first).toMatchObject({ version: '0.1.0', protocol_version: runtimedProtocolVersion });
    await d.stop();
    const again = await d.restart();
    daemons.push(again);
    const third = await again.control({ type: 'get_daemon_info' });
    expect(third.pid === first.pid && third.started_at === first.started_at).toBe(false);
    const info = JSON.parse(readFileSync(join(d.dir, 'run', 'daemon.json'), 'utf8'));
    expect(info).toMatchObject({
      pid: third.pid,
      started_at: third.started_at,
      version: '0.1.0',
      socket: d.socketPath,
    });
  });

  it('gives two opens of one path the same room', async () => {
    const d = await daemon();
    const path = join(d.dir, 'shared.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'agent-a' });
    const b = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'agent-b' });
    expect(b.greeting.notebook_id).toBe(a.greeting.notebook_id);
    expect(a.greeting.notebook_path).toBe(path);
    expect(await rooms(d)).toEqual([expect.objectContaining({ notebook_id: a.greeting.notebook_id, active_peers: 2 })]);
  });

  it('refuses to attach an unknown UUID without creating anything', async () => {
    const d = await daemon();
    await peer(d, { channel: 'notebook', mode: 'open', path: join(d.dir, 'a.ipynb'), peer_label: 'x' });
    const before = await rooms(d);
    const error = await rejection(
      d.connect({
        channel: 'notebook',
        mode: 'attach',
        notebook_id: '6f1c2a9e-0000-4000-8000-000000000001',
        peer_label: 'x',
      }),
    );
    expect([error.kind, error.code]).toEqual(['daemonRefused', 'notebook_unavailable']);
    expect(error.code).toBe('notebook_unavailable');
    expect(await rooms(d)).toEqual(before);
  });

  it('applies nothing once another daemon holds its lock or socket: the request is refused, the daemon stops', async () => {
    const d = await daemon();
    const path = join(d.dir, 'taken.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    await a.connection.request({ type: 'insert_cell', source: 'before = 1' });
    // A successor took the lock (as one does after a holder that stopped answering): another nonce.
    const lockPath = join(dirname(d.socketPath), 'daemon.lock');
    const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
    writeFileSync(lockPath, JSON.stringify({ ...lock, pid: process.pid, nonce: 'a-successor' }));
    // The ownership check runs at most every 200 ms: the request after that is refused.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const refused = await rejection(a.connection.request({ type: 'insert_cell', source: 'after = 2' }));
    expect(refused.code).toBe('shutting_down');
    expect(refused.message).toContain('did not apply the request');
    expect(refused.message).toContain('another daemon');
    await until(
      async () => d.process.exitCode !== null || d.process.signalCode !== null,
      (exited) => exited,
      'the superseded daemon to exit',
    );
    // It left the successor's lock alone, and saved nothing of the refused request.
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).nonce).toBe('a-successor');
    expect(readFileSync(path, 'utf8')).not.toContain('after = 2');
  });

  it('applies none of the requests that waited while its process was stopped; later ones it serves', async () => {
    const d = await daemon([...fast, '--stall-refusal-ms', '1500']);
    const path = join(d.dir, 'stalled.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    const pid = d.process.pid as number;
    process.kill(pid, 'SIGSTOP');
    const waited = rejection(a.connection.request({ type: 'insert_cell', source: 'waited = 1' }));
    await new Promise((resolve) => setTimeout(resolve, 4000));
    process.kill(pid, 'SIGCONT');
    const refused = await waited;
    expect(refused.code).toBe('shutting_down');
    expect(refused.message).toMatch(/stopped or stalled for \d+ s/);
    const served = await until(
      () =>
        a.connection.request({ type: 'insert_cell', source: 'later = 2' }).then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      'a request served again',
    );
    expect(served).toBe(true);
    const { cells } = (await a.connection.request({ type: 'get_cells' })) as { cells: { source: string }[] };
    expect(cells.map((cell) => cell.source)).toEqual(['later = 2']);
  });

  it('broadcasts changes to the other peers with the document version', async () => {
    const d = await daemon();
    const path = join(d.dir, 'b.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    const b = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'b' });
    const seenByB: Record<string, unknown>[] = [];
    const seenByA: Record<string, unknown>[] = [];
    b.connection.onFrame((frame) => seenByB.push(frame));
    a.connection.onFrame((frame) => seenByA.push(frame));
    const inserted = await a.connection.request({ type: 'insert_cell', source: 'x = 1', cell_type: 'code' });
    await until(
      async () => seenByB.filter((frame) => frame.event === 'cell_inserted'),
      (list) => list.length === 1,
      'the broadcast',
    );
    expect(seenByB.find((frame) => frame.event === 'cell_inserted')).toMatchObject({
      type: 'broadcast',
      document_version: inserted.document_version,
      cell: { source: 'x = 1' },
    });
    expect(seenByA.some((frame) => frame.event === 'cell_inserted')).toBe(false);
  });

  it('applies a repeated idempotency key once', async () => {
    const d = await daemon();
    const { connection } = await peer(d, {
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'c.ipynb'),
      peer_label: 'a',
    });
    const first = await connection.request({ type: 'insert_cell', source: 'print(1)', idempotency_key: 'k-1' });
    const replay = await connection.request({ type: 'insert_cell', source: 'print(1)', idempotency_key: 'k-1' });
    expect(replay.cell).toEqual(first.cell);
    expect(((await connection.request({ type: 'get_cells' })).cells as unknown[]).length).toBe(1);
    const conflict = await rejection(connection.request({ type: 'delete_cell', cell_id: 'x', idempotency_key: 'k-1' }));
    expect(conflict.code).toBe('idempotency_conflict');
  });

  it('keeps a saved notebook attachable by its UUID across a daemon restart', async () => {
    const d = await daemon();
    const { connection, greeting } = await peer(d, {
      channel: 'notebook',
      mode: 'create',
      runtime: 'python',
      working_dir: d.dir,
      peer_label: 'a',
    });
    await connection.request({ type: 'insert_cell', source: 'kept = True' });
    const path = join(d.dir, 'saved.ipynb');
    expect(await connection.request({ type: 'save', path })).toMatchObject({
      notebook_id: greeting.notebook_id,
      notebook_path: path,
    });
    await d.stop();
    const again = await d.restart();
    daemons.push(again);
    const reattached = await peer(again, {
      channel: 'notebook',
      mode: 'attach',
      notebook_id: String(greeting.notebook_id),
      peer_label: 'a',
    });
    expect(reattached.greeting).toMatchObject({ notebook_id: greeting.notebook_id, notebook_path: path });
    expect((reattached.greeting.cells as { source: string }[]).map((cell) => cell.source)).toEqual(['kept = True']);
    const reopened = await peer(again, { channel: 'notebook', mode: 'open', path, peer_label: 'b' });
    expect(reopened.greeting.notebook_id).toBe(greeting.notebook_id);
  });

  it('restores a persisted untitled notebook after a restart, and forgets an ephemeral one', async () => {
    const d = await daemon();
    const kept = await peer(d, {
      channel: 'notebook',
      mode: 'create',
      runtime: 'python',
      working_dir: d.dir,
      ephemeral: false,
      peer_label: 'a',
    });
    const gone = await peer(d, {
      channel: 'notebook',
      mode: 'create',
      runtime: 'python',
      working_dir: d.dir,
      peer_label: 'a',
    });
    expect(gone.greeting.ephemeral).toBe(true);
    await kept.connection.request({ type: 'insert_cell', source: 'draft' });
    await gone.connection.request({ type: 'insert_cell', source: 'scratch' });
    await d.stop();
    const again = await d.restart();
    daemons.push(again);
    const restored = await peer(again, {
      channel: 'notebook',
      mode: 'attach',
      notebook_id: String(kept.greeting.notebook_id),
      peer_label: 'a',
    });
    expect((restored.greeting.cells as { source: string }[]).map((cell) => cell.source)).toEqual(['draft']);
    expect(restored.greeting.notebook_path).toBeNull();
    const error = await rejection(
      again.connect({
        channel: 'notebook',
        mode: 'attach',
        notebook_id: String(gone.greeting.notebook_id),
        peer_label: 'a',
      }),
    );
    expect([error.kind, error.code]).toEqual(['daemonRefused', 'notebook_unavailable']);
  });

  it('refuses to save over a path another room owns, and an untitled save without a path', async () => {
    const d = await daemon();
    const owned = join(d.dir, 'owned.ipynb');
    await peer(d, { channel: 'notebook', mode: 'open', path: owned, peer_label: 'a' });
    const { connection } = await peer(d, {
      channel: 'notebook',
      mode: 'create',
      runtime: 'python',
      working_dir: d.dir,
      peer_label: 'b',
    });
    const taken = await rejection(connection.request({ type: 'save', path: owned }));
    expect(taken.code).toBe('path_already_open');
    expect(taken.message).toMatch(/is already open in session/);
    expect((await rejection(connection.request({ type: 'save' }))).code).toBe('no_path');
  });

  it('autosaves file-backed notebooks atomically in a form Python nbformat validates', async () => {
    const d = await daemon();
    const path = join(d.dir, 'auto.ipynb');
    const { connection } = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    await connection.request({ type: 'insert_cell', source: 'import math\nmath.pi\n' });
    await connection.request({ type: 'insert_cell', source: '# Title', cell_type: 'markdown', index: 0 });
    await until(
      async () => readFileSync(path, 'utf8'),
      (text) => text.includes('math.pi'),
      'the autosave',
    );
    const check = spawnSync(
      '/usr/bin/python3',
      [
        '-c',
        'import nbformat,sys; nb=nbformat.read(sys.argv[1], as_version=4); nbformat.validate(nb); print(len(nb.cells), nb.cells[0].cell_type, nb.cells[1].source)',
        path,
      ],
      { encoding: 'utf8' },
    );
    expect(check.stderr).toBe('');
    expect(check.stdout).toBe('2 markdown import math\nmath.pi\n\n');
  });

  it('leaves a notebook file it cannot parse untouched and says why', async () => {
    const d = await daemon();
    const path = join(d.dir, 'broken.ipynb');
    writeFileSync(path, '{"cells": [');
    const error = await rejection(d.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'a' }));
    expect(error.code).toBe('load_failed');
    expect(error.message).toMatch(/^Cannot load .*broken\.ipynb: not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe('{"cells": [');
    expect(await rooms(d)).toEqual([]);
  });

  it('survives 100 malformed, oversized and unknown frames and keeps serving others', async () => {
    const d = await daemon();
    const { connection } = await peer(d, {
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'safe.ipynb'),
      peer_label: 'a',
    });
    await connection.request({ type: 'insert_cell', source: 'still here' });
    const garbage = (index: number): Buffer => {
      switch (index % 4) {
        case 0:
          return Buffer.from('GET / HTTP/1.1\r\n\r\n');
        case 1: {
          const body = Buffer.from('{not json');
          const header = Buffer.alloc(4);
          header.writeUInt32BE(body.length);
          return Buffer.concat([runtimedPreamble(), header, body]);
        }
        case 2: {
          const header = Buffer.alloc(4);
          header.writeUInt32BE(0x7fffffff);
          return Buffer.concat([runtimedPreamble(), header]);
        }
        default:
          return Buffer.concat([runtimedPreamble(), encodeRuntimedFrame({ channel: 'telnet' })]);
      }
    };
    const answers = await Promise.all(
      Array.from(
        { length: 100 },
        (_, index) =>
          new Promise<string>((resolve) => {
            const socket = connect(d.socketPath);
            let received = Buffer.alloc(0);
            socket.on('data', (chunk) => {
              received = Buffer.concat([received, chunk]);
            });
            socket.on('close', () =>
              resolve(received.length > 4 ? String(JSON.parse(received.subarray(4).toString()).code) : 'none'),
            );
            socket.on('error', () => undefined);
            socket.write(garbage(index));
          }),
      ),
    );
    expect(new Set(answers)).toEqual(new Set(['bad_preamble', 'bad_frame', 'oversized_frame', 'unknown_channel']));
    expect((await d.control({ type: 'ping' })).pong).toBe(true);
    expect(((await connection.request({ type: 'get_cells' })).cells as { source: string }[])[0]?.source).toBe(
      'still here',
    );
  });

  it('delivers everything it sent before a protocol error, however slowly the client reads, then closes', async () => {
    const d = await daemon();
    const path = join(d.dir, 'big.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    await a.connection.request({ type: 'insert_cell', source: 'x'.repeat(4 * 1024 * 1024) });
    const socket = connect(d.socketPath);
    socket.on('error', () => undefined);
    socket.pause();
    const notJson = Buffer.from('{not json');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(notJson.length);
    socket.write(
      Buffer.concat([
        runtimedPreamble(),
        encodeRuntimedFrame({ channel: 'notebook', mode: 'open', path, peer_label: 'slow' }),
        header,
        notJson,
      ]),
    );
    // The answer (the whole notebook) cannot leave while nobody reads; the daemon must wait for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const decoder = new RuntimedFrameDecoder();
    const types: string[] = [];
    socket.on('data', (chunk: Buffer) => {
      for (const decoded of decoder.push(chunk)) {
        const value = decoded.kind === 'frame' ? (decoded.value as { type?: string; code?: string }) : {};
        types.push(value.type === 'error' ? `error:${value.code}` : String(value.type));
      }
    });
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(types).toEqual(['connected', 'error:bad_frame']);
  });

  it('carries a 20 MB cell in 1 MiB frames both ways, to other peers, and across a save and a restart', async () => {
    const d = await daemon();
    const path = join(d.dir, 'large.ipynb');
    const a = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    const b = await peer(d, { channel: 'notebook', mode: 'open', path, peer_label: 'b' });
    const seenByB: Record<string, unknown>[] = [];
    b.connection.onFrame((frame) => seenByB.push(frame));
    // Every client decoder refuses a frame over 1 MiB, so each answer below proves the daemon split it.
    const source = `# ${'ü'.repeat(10 * 1024 * 1024)}`;
    const inserted = await a.connection.request({ type: 'insert_cell', source });
    expect((inserted.cell as { source: string }).source).toBe(source);
    const broadcast = await until(
      async () => seenByB.find((frame) => frame.event === 'cell_inserted'),
      (frame) => frame !== undefined,
      'the broadcast of the large cell',
    );
    expect((broadcast?.cell as { source?: string } | undefined)?.source).toBe(source);
    await a.connection.request({ type: 'save', path });
    await d.stop();
    const again = await d.restart();
    daemons.push(again);
    const reopened = await peer(again, { channel: 'notebook', mode: 'open', path, peer_label: 'c' });
    expect((reopened.greeting.cells as { source: string }[]).map((cell) => cell.source)).toEqual([source]);
    const cells = await reopened.connection.request({ type: 'get_cells' });
    expect((cells.cells as { source: string }[])[0]?.source).toBe(source);
  }, 120_000);

  it('answers a message over --max-message-mib with oversized_message and keeps the connection', async () => {
    const d = await daemon([...fast, '--max-message-mib', '1']);
    const { connection } = await peer(d, {
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'capped.ipynb'),
      peer_label: 'a',
    });
    const refused = await rejection(connection.request({ type: 'insert_cell', source: 'x'.repeat(2 * 1024 * 1024) }));
    expect(refused.kind).toBe('messageTooLarge');
    expect(refused.code).toBe('oversized_message');
    expect(refused.message).toMatch(/^Message of \d+ bytes is over the limit of 1048576$/);
    await connection.request({ type: 'insert_cell', source: 'y'.repeat(600 * 1024) });
    await connection.request({ type: 'insert_cell', source: 'z'.repeat(600 * 1024) });
    const tooBig = await rejection(connection.request({ type: 'get_cells' }));
    expect(tooBig.kind).toBe('messageTooLarge');
    expect(tooBig.message).toMatch(
      /^The answer could not be sent: The message is \d+ bytes, over the 1048576-byte limit of one daemon message$/,
    );
    expect((await connection.request({ type: 'get_cell', cell_id: 'nope' }).catch((error) => error)).code).toBe(
      'cell_not_found',
    );
    expect(connection.isClosed).toBe(false);
  });

  it('refuses a client of another protocol version with a clear unsupported_protocol error', async () => {
    const d = await daemon();
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const socket = connect(d.socketPath);
      let received = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        received = Buffer.concat([received, chunk]);
      });
      socket.on('close', () => resolve(JSON.parse(received.subarray(4).toString()) as Record<string, unknown>));
      socket.on('error', reject);
      socket.write(Buffer.concat([runtimedPreamble(1), encodeRuntimedFrame({ channel: 'control' })]));
    });
    expect(answer).toEqual({
      type: 'error',
      code: 'unsupported_protocol',
      message: `Protocol version 1 is not supported; this daemon (0.1.0) speaks ${runtimedProtocolVersion}. Stop it (runtimed stop) so a matching one can start.`,
    });
  });

  it('keeps its socket 0600 in a 0700 directory and refuses a second daemon', async () => {
    const d = await daemon();
    expect(statSync(d.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(d.dir, 'run')).mode & 0o777).toBe(0o700);
    const second = spawnSync(
      process.execPath,
      [
        join(import.meta.dirname, '..', '..', 'dist', 'runtimed.js'),
        'start',
        '--foreground',
        '--no-kernels',
        '--socket',
        d.socketPath,
        '--data-dir',
        d.dataDir,
      ],
      { encoding: 'utf8', timeout: 15_000 },
    );
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(/a daemon is already running \(pid \d+\)/);
    expect((await d.control({ type: 'ping' })).pong).toBe(true);
  });

  it('cleans up after a crashed daemon: stale socket and lock are taken over', async () => {
    const d = await daemon();
    await d.kill();
    expect(statSync(d.socketPath).isSocket()).toBe(true);
    const again = await d.restart();
    daemons.push(again);
    expect((await again.control({ type: 'ping' })).pong).toBe(true);
  });

  it('streams daemon events to subscribers', async () => {
    const d = await daemon();
    const { connection } = await peer(d, { channel: 'control' });
    const events: Record<string, unknown>[] = [];
    connection.onFrame((frame) => events.push(frame));
    await connection.request({ type: 'subscribe' });
    const notebook = await peer(d, {
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'e.ipynb'),
      peer_label: 'Claude Code agent:ada:s1',
    });
    notebook.connection.close();
    await until(
      async () => events.map((event) => event.event),
      (kinds) => kinds.includes('peer_left'),
      'peer_left',
    );
    expect(events.map((event) => event.event)).toEqual(
      expect.arrayContaining(['room_opened', 'peer_joined', 'kernel_status', 'peer_left']),
    );
    expect(events.find((event) => event.event === 'peer_joined')).toMatchObject({
      peer_label: 'Claude Code agent:ada:s1',
      active_peers: 1,
    });
  });
});
