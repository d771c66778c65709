import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSocketIsOurs, RuntimedConnection } from './runtimed-connection.js';
import { encodeRuntimedFrame, RuntimedFrameDecoder } from './runtimed-frame-decoder.js';
import { RuntimedProtocolError } from './runtimed-protocol-error.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A tiny stand-in daemon: answers the handshake, echoes requests, can be told to drop connections. */
async function fakeDaemon(
  onRequest: (frame: Record<string, unknown>, reply: (frame: unknown) => void) => void,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rconn-'));
  const path = join(dir, 's.sock');
  const server: Server = createServer((socket) => {
    const decoder = new RuntimedFrameDecoder();
    let greeted = false;
    socket.on('data', (chunk) => {
      for (const decoded of decoder.push(greeted ? chunk : chunk.subarray(5))) {
        if (decoded.kind !== 'frame') continue;
        const reply = (frame: unknown) => socket.write(encodeRuntimedFrame(frame));
        if (!greeted) reply({ type: 'hello', pid: 1 });
        else onRequest(decoded.value as Record<string, unknown>, reply);
        greeted = true;
      }
      greeted = true;
    });
    cleanups.push(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return path;
}

describe(assertSocketIsOurs, () => {
  it("accepts our own socket, refuses another user's, and reports a missing one as no daemon", async () => {
    const path = await fakeDaemon(() => undefined);
    const me = process.getuid?.() ?? 0;
    await expect(assertSocketIsOurs(path, me)).resolves.toBeUndefined();
    const refused = await assertSocketIsOurs(path, me + 1).catch((error: unknown) => error);
    expect(RuntimedProtocolError.is(refused, 'unsafeSocket')).toBe(true);
    expect((refused as Error).message).toMatch(/belongs to uid \d+, not to this user/);
    const missing = await assertSocketIsOurs(join(tmpdir(), 'no-such-dir-x', 's.sock')).catch(
      (error: unknown) => error,
    );
    expect(RuntimedProtocolError.is(missing, 'daemonUnavailable')).toBe(true);
  });
});

describe(RuntimedConnection, () => {
  it('matches answers to requests by id, delivers other frames to listeners, and maps error frames', async () => {
    const path = await fakeDaemon((frame, reply) => {
      if (frame.type === 'boom') reply({ type: 'error', id: frame.id, code: 'notebook_unavailable', message: 'gone' });
      else {
        reply({ type: 'broadcast', event: 'noise' });
        reply({ type: 'ok', id: frame.id, echo: frame.type });
      }
    });
    const { connection, greeting } = await RuntimedConnection.open({
      socketPath: path,
      handshake: { channel: 'control' },
    });
    cleanups.push(() => connection.close());
    expect(greeting).toEqual({ type: 'hello', pid: 1 });
    const heard: unknown[] = [];
    connection.onFrame((frame) => heard.push(frame));
    const [a, b] = await Promise.all([connection.request({ type: 'one' }), connection.request({ type: 'two' })]);
    expect([a.echo, b.echo]).toEqual(['one', 'two']);
    expect(heard).toHaveLength(2);
    const error = await connection.request({ type: 'boom' }).catch((caught: unknown) => caught);
    expect(RuntimedProtocolError.is(error, 'daemonRefused')).toBe(true);
    expect((error as RuntimedProtocolError).code).toBe('notebook_unavailable');
  });

  it('rejects pending requests with daemonUnavailable when the connection drops', async () => {
    const path = await fakeDaemon((_frame, _reply) => undefined);
    const { connection } = await RuntimedConnection.open({ socketPath: path, handshake: { channel: 'control' } });
    const pending = connection.request({ type: 'never-answered' });
    const closed = new Promise<string>((resolve) => connection.onClose(resolve));
    for (const cleanup of cleanups.splice(0)) cleanup();
    const error = await pending.catch((caught: unknown) => caught);
    expect(RuntimedProtocolError.is(error, 'daemonUnavailable')).toBe(true);
    expect(await closed).not.toBe('');
    await expect(connection.request({ type: 'late' })).rejects.toSatisfy((caught: unknown) =>
      RuntimedProtocolError.is(caught, 'daemonUnavailable'),
    );
  });
});

describe('RuntimedConnection typed requests', () => {
  it('reads answers with the schema of their request, and refuses one that breaks it, naming the field', async () => {
    const path = await fakeDaemon((frame, reply) => {
      if (frame.type === 'list_rooms') reply({ type: 'ok', id: frame.id, rooms: [{ notebook_id: 'n' }] });
      else if (frame.type === 'get_cells') reply({ type: 'ok', id: frame.id, document_version: 2, cells: [] });
      else reply({ type: 'error', id: frame.id, code: 42 });
    });
    const { connection } = await RuntimedConnection.open({ socketPath: path, handshake: { channel: 'control' } });
    cleanups.push(() => connection.close());
    expect(await connection.requestNotebook({ type: 'get_cells' })).toEqual({ document_version: 2, cells: [] });
    const broken = await connection.requestControl({ type: 'list_rooms' }).catch((caught: unknown) => caught);
    expect(RuntimedProtocolError.is(broken, 'protocolViolation')).toBe(true);
    expect((broken as Error).message).toBe(
      "The daemon sent an invalid list_rooms answer: Missing required number field 'rooms[0].active_peers'",
    );
    // An error frame without a string code and message is itself a violation, not a refusal.
    const odd = await connection.requestControl({ type: 'ping' }).catch((caught: unknown) => caught);
    expect(RuntimedProtocolError.is(odd, 'protocolViolation')).toBe(true);
    expect((odd as Error).message).toBe(
      "The daemon sent an invalid error frame: Field 'code' must be a string, got 42",
    );
  });
});

describe('RuntimedConnection with messages larger than a frame', () => {
  it('sends and receives messages of several MiB whole, as continuation frames both ways', async () => {
    const seen: number[] = [];
    const path = await fakeDaemon((frame, reply) => {
      seen.push(String(frame.payload).length);
      reply({ type: 'ok', id: frame.id, payload: `${String(frame.payload)}!` });
    });
    const { connection } = await RuntimedConnection.open({ socketPath: path, handshake: { channel: 'control' } });
    cleanups.push(() => connection.close());
    const payload = 'ü'.repeat(3 * 1024 * 1024);
    const [answer, small] = await Promise.all([
      connection.request({ type: 'echo', payload }),
      connection.request({ type: 'echo', payload: 'tiny' }),
    ]);
    expect(answer.payload).toBe(`${payload}!`);
    expect(small.payload).toBe('tiny!');
    expect(seen).toEqual([payload.length, 4]);
  });

  it('refuses to send a request over the message cap, and rejects an answer over it; the connection goes on', async () => {
    const seen: string[] = [];
    const path = await fakeDaemon((frame, reply) => {
      seen.push(String(frame.type));
      reply({ type: 'ok', id: frame.id, payload: frame.type === 'big' ? 'y'.repeat(300_000) : 'fine' });
    });
    const { connection } = await RuntimedConnection.open({
      socketPath: path,
      handshake: { channel: 'control' },
      maxMessageBytes: 200_000,
    });
    cleanups.push(() => connection.close());
    const refused = await connection.request({ type: 'send', payload: 'x'.repeat(250_000) }).catch((error) => error);
    expect(RuntimedProtocolError.is(refused, 'messageTooLarge')).toBe(true);
    expect((refused as Error).message).toMatch(/^The message is \d+ bytes, over the 200000-byte limit/);
    const tooBig = await connection.request({ type: 'big' }).catch((error) => error);
    expect(RuntimedProtocolError.is(tooBig, 'messageTooLarge')).toBe(true);
    expect((tooBig as Error).message).toMatch(/^The daemon's answer is \d+ bytes, over the 200000-byte limit/);
    expect((await connection.request({ type: 'after' })).payload).toBe('fine');
    expect(seen).toEqual(['big', 'after']);
    expect(connection.isClosed).toBe(false);
  });
});

describe('RuntimedConnection backlog', () => {
  it('keeps frames that arrive right behind the greeting for the first listener', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rconn-'));
    const path = join(dir, 's.sock');
    const server = createServer((socket) => {
      socket.once('data', () =>
        socket.write(
          Buffer.concat([
            encodeRuntimedFrame({ type: 'connected' }),
            encodeRuntimedFrame({ type: 'broadcast', n: 1 }),
            encodeRuntimedFrame({ type: 'broadcast', n: 2 }),
          ]),
        ),
      );
      cleanups.push(() => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    cleanups.push(() => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const { connection } = await RuntimedConnection.open({ socketPath: path, handshake: { channel: 'control' } });
    cleanups.push(() => connection.close());
    await new Promise((resolve) => setImmediate(resolve));
    const heard: unknown[] = [];
    connection.onFrame((frame) => heard.push(frame.n));
    expect(heard).toEqual([1, 2]);
  });
});
