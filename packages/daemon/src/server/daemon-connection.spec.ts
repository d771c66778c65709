import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import {
  defaultMaxFrameBytes,
  defaultMaxMessageBytes,
  encodeRuntimedFrame,
  RuntimedFrameDecoder,
  runtimedPreamble,
} from '@nteract-mcp/runtimed-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RoomCatalog } from '../room/room-catalog.js';
import { createKernellessCatalog } from '../testing/test-room-settings.js';
import { admitNotebook } from './admit-notebook.js';
import { DaemonConnection, type DaemonConnectionHost } from './daemon-connection.js';

let dir: string;
let catalog: RoomCatalog;
let server: Server;
let socketPath: string;
/** The daemon side of every connection, in order, and how many notebook handshakes were admitted. */
let connections: DaemonConnection[];
let admissions: number;
/** When set, admissions wait for it (a room that takes its time to open). */
let admissionGate: Promise<void> | undefined;
const clients: Socket[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'connection-'));
  const logger = new RecordingLogger();
  catalog = await createKernellessCatalog(dir, logger);
  connections = [];
  admissions = 0;
  admissionGate = undefined;
  const host: DaemonConnectionHost = {
    info: { pid: process.pid, started_at: new Date().toISOString(), version: '0.0.0-spec', protocol_version: 1 },
    logger,
    maxFrameBytes: defaultMaxFrameBytes,
    maxMessageBytes: defaultMaxMessageBytes,
    handshakeTimeoutMs: 10_000,
    admitNotebook: async (frame) => {
      admissions += 1;
      await admissionGate;
      return admitNotebook(catalog, frame);
    },
    control: () => undefined,
    refusal: () => undefined,
    closed: () => undefined,
  };
  server = createServer({ allowHalfOpen: true }, (socket) => connections.push(new DaemonConnection(socket, host)));
  socketPath = join(dir, 'runtimed.sock');
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await catalog.closeAll('the test ended');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** A raw client: what it was sent, decoded, and whether its connection closed. */
async function client(): Promise<{ socket: Socket; frames: Record<string, unknown>[]; closed: Promise<void> }> {
  const socket = connect(socketPath);
  clients.push(socket);
  const frames: Record<string, unknown>[] = [];
  const decoder = new RuntimedFrameDecoder();
  socket.on('data', (chunk: Buffer) => {
    for (const decoded of decoder.push(chunk)) {
      if (decoded.kind === 'frame') frames.push(decoded.value as Record<string, unknown>);
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, frames, closed };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('DaemonConnection states', () => {
  it('ends a connection with a bad preamble without admitting it', async () => {
    const { socket, frames, closed } = await client();
    await until(() => connections.length === 1, 'the connection');
    const connection = connections[0] as DaemonConnection;
    expect(connection.state).toBe('preamble');
    socket.write('GET / HTTP/1.1\r\n\r\n');
    await closed;
    expect(connection.state).toBe('leaving');
    expect(frames).toEqual([expect.objectContaining({ type: 'error', code: 'bad_preamble' })]);
    expect(admissions).toBe(0);
    expect(catalog.list()).toEqual([]);
  });

  it('admits a notebook handshake, and its peer leaves the room when the connection closes', async () => {
    const { socket, frames } = await client();
    await until(() => connections.length === 1, 'the connection');
    const connection = connections[0] as DaemonConnection;
    socket.write(runtimedPreamble());
    await until(() => connection.state === 'handshake', 'the preamble to be read');
    socket.write(encodeRuntimedFrame({ channel: 'notebook', mode: 'create', peer_label: 'spec', working_dir: dir }));
    await until(() => frames.length > 0, 'the greeting');
    expect(frames[0]).toMatchObject({ type: 'connected', ephemeral: true });
    expect(connection.state).toBe('admitted');
    const room = catalog.get(String(frames[0]?.notebook_id));
    expect(room?.peerCount).toBe(1);

    socket.destroy();
    await until(() => connection.state === 'leaving', 'the connection to leave');
    await until(() => room?.peerCount === 0, 'the peer to leave its room');
  });

  it('leaves on a leave request: answered, then the connection ends', async () => {
    const { socket, frames, closed } = await client();
    await until(() => connections.length === 1, 'the connection');
    const connection = connections[0] as DaemonConnection;
    // Preamble, handshake and the leave in one write: the leave waits for the admission.
    socket.write(
      Buffer.concat([
        runtimedPreamble(),
        encodeRuntimedFrame({ channel: 'notebook', mode: 'create', peer_label: 'spec', working_dir: dir }),
        encodeRuntimedFrame({ id: 1, type: 'leave' }),
      ]),
    );
    await closed;
    // (Broadcasts to the peer, e.g. its runtime becoming unavailable, may come between.)
    const answers = frames.filter((frame) => frame.type !== 'broadcast');
    expect(answers.map((frame) => frame.type)).toEqual(['connected', 'ok']);
    expect(answers[1]).toMatchObject({ id: 1, left: true });
    expect(connection.state).toBe('leaving');
    expect(catalog.get(String(frames[0]?.notebook_id))?.peerCount).toBe(0);
  });

  it('adds no peer for a connection that closed while its handshake was being admitted', {
    timeout: 20_000,
  }, async () => {
    let open!: () => void;
    admissionGate = new Promise((resolve) => {
      open = resolve;
    });
    const { socket } = await client();
    await until(() => connections.length === 1, 'the connection');
    const connection = connections[0] as DaemonConnection;
    socket.write(
      Buffer.concat([
        runtimedPreamble(),
        encodeRuntimedFrame({ channel: 'notebook', mode: 'create', peer_label: 'spec', working_dir: dir }),
      ]),
    );
    await until(() => connection.state === 'admitting', 'the admission to start');
    // The connection is cut off (as the daemon does at shutdown) before the room let it in.
    connection.destroy();
    await until(() => connection.state === 'leaving', 'the connection to leave');
    open();
    await until(() => catalog.list().length === 1, 'the room the admission opened');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Nobody is there: the room is free to be torn down and reaped.
    expect(catalog.list()[0]?.active_peers).toBe(0);
  });
});
