import { join } from 'node:path';
import {
  type RuntimedConnection,
  type RuntimedFrame,
  RuntimedProtocolError,
  type WireControlRequest,
  type WireNotebookRequest,
  wireControlAnswerSchemas,
  wireControlHelloSchema,
  wireDaemonEventSchema,
  wireNotebookAnswerSchemas,
  wireNotebookConnectedSchema,
  wireRoomClosedSchema,
  wireRoomEventSchema,
} from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

/*
 * The wire contract against the real daemon: every frame it sends in answer to every request, and
 * every broadcast and event, is read by the protocol's schemas and holds nothing the schemas do not
 * name (so the schemas are the one definition of what travels); and requests whose fields break
 * their schema are answered `bad_request` naming the field, with the connection going on.
 */

const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

async function daemon(args: readonly string[]): Promise<TestDaemon> {
  const started = await startTestDaemon(args);
  daemons.push(started);
  return started;
}

async function waitFor<T>(read: () => Promise<T> | T, accept: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What this spec needs of a schema. */
interface WireSchema {
  safeParse(value: unknown): { readonly data?: unknown; readonly error?: { readonly issues: readonly unknown[] } };
}

/** Reads `frame` with `schema` and checks it names every field the daemon sent (but `type`/`id` of answers). */
function expectDescribed(schema: WireSchema, frame: RuntimedFrame, omit: readonly string[] = []): void {
  const parsed = schema.safeParse(frame);
  expect(parsed.error?.issues ?? [], JSON.stringify(frame).slice(0, 300)).toEqual([]);
  const sent = Object.fromEntries(Object.entries(frame).filter(([key]) => !omit.includes(key)));
  expect(parsed.data).toEqual(sent);
}

/** Sends a notebook request as it is and checks its answer against the schema of its type. */
async function notebook<R extends WireNotebookRequest>(connection: RuntimedConnection, request: R) {
  const answer = await connection.request(request);
  expectDescribed(wireNotebookAnswerSchemas[request.type], answer, ['type', 'id']);
  return answer;
}

async function control<R extends WireControlRequest>(connection: RuntimedConnection, request: R) {
  const answer = await connection.request(request);
  expectDescribed(wireControlAnswerSchemas[request.type], answer, ['type', 'id']);
  return answer;
}

/** The daemon's refusal: an error frame the client read (a malformed one would be a `protocolViolation`). */
async function refusal(promise: Promise<unknown>): Promise<RuntimedProtocolError> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (caught: unknown) => caught,
  );
  if (!RuntimedProtocolError.is(error, 'daemonRefused')) throw error;
  return error;
}

describe('the runtimed wire contract (real process)', { timeout: 120_000 }, () => {
  it('sends greetings, answers, broadcasts and events that the schemas read and fully describe', async () => {
    const d = await daemon(['--no-kernels', '--autosave-debounce-ms', '20']);
    const { connection: watcher, greeting: hello } = await d.connect({ channel: 'control' });
    connections.push(watcher);
    expectDescribed(wireControlHelloSchema, hello);
    const events: RuntimedFrame[] = [];
    watcher.onFrame((frame) => events.push(frame));
    await control(watcher, { type: 'subscribe' });
    await control(watcher, { type: 'ping' });
    await control(watcher, { type: 'get_daemon_info' });

    const path = join(d.dir, 'contract.ipynb');
    const a = await d.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'a' });
    connections.push(a.connection);
    expectDescribed(wireNotebookConnectedSchema, a.greeting);
    const created = await d.connect({
      channel: 'notebook',
      mode: 'create',
      runtime: 'python',
      working_dir: d.dir,
      ephemeral: true,
      peer_label: 'c',
    });
    connections.push(created.connection);
    expectDescribed(wireNotebookConnectedSchema, created.greeting);
    const b = await d.connect({
      channel: 'notebook',
      mode: 'attach',
      notebook_id: String(a.greeting.notebook_id),
      peer_label: 'b',
    });
    connections.push(b.connection);
    expectDescribed(wireNotebookConnectedSchema, b.greeting);
    const broadcasts: RuntimedFrame[] = [];
    const closings: RuntimedFrame[] = [];
    b.connection.onFrame((frame) => (frame.type === 'broadcast' ? broadcasts : closings).push(frame));

    const first = await notebook(a.connection, { type: 'insert_cell', source: 'x = 1', idempotency_key: 'k-1' });
    const cellId = (first.cell as { id: string }).id;
    await notebook(a.connection, { type: 'insert_cell', source: '# title', cell_type: 'markdown', index: 0 });
    await notebook(a.connection, { type: 'update_cell', cell_id: cellId, source: 'x = 2' });
    await notebook(a.connection, { type: 'move_cell', cell_id: cellId, after_cell_id: null });
    await notebook(a.connection, { type: 'clear_outputs', cell_id: cellId });
    await notebook(a.connection, { type: 'get_cell', cell_id: cellId });
    await notebook(a.connection, { type: 'get_cells' });
    await notebook(a.connection, { type: 'get_runtime' });
    const markdown = await notebook(a.connection, { type: 'insert_cell', source: 'note', cell_type: 'markdown' });
    // A markdown cell "runs" at once: the execution is `ok` without a kernel.
    const started = await notebook(a.connection, {
      type: 'execute_cell',
      cell_id: (markdown.cell as { id: string }).id,
    });
    await notebook(a.connection, { type: 'get_execution', execution_id: String(started.execution_id) });
    await notebook(a.connection, { type: 'save' });
    await notebook(a.connection, { type: 'save', path: join(d.dir, 'contract-copy.ipynb') });
    await notebook(a.connection, { type: 'delete_cell', cell_id: cellId });
    await notebook(created.connection, { type: 'leave' });
    await waitFor(
      () => broadcasts.map((frame) => frame.event),
      (seen) => ['cell_inserted', 'cell_updated', 'cell_moved', 'cell_deleted', 'saved'].every((e) => seen.includes(e)),
      'the broadcasts',
    );
    for (const frame of broadcasts) expectDescribed(wireRoomEventSchema, frame, ['type']);

    const listed = await control(watcher, { type: 'list_rooms' });
    expect((listed.rooms as unknown[]).length).toBe(2);
    await control(watcher, { type: 'shutdown_notebook', notebook_id: String(a.greeting.notebook_id) });
    await waitFor(
      () => closings,
      (seen) => seen.length > 0,
      'room_closed',
    );
    expectDescribed(wireRoomClosedSchema, closings[0] as RuntimedFrame);
    await waitFor(
      () => events.map((frame) => frame.event),
      (seen) => ['room_opened', 'peer_joined', 'peer_left', 'room_closed'].every((e) => seen.includes(e)),
      'the daemon events',
    );
    for (const frame of events) expectDescribed(wireDaemonEventSchema, frame, ['type']);
  });

  it('sends execution broadcasts and answers of a real kernel that the schemas read and fully describe', async () => {
    const d = await daemon([]);
    const a = await d.connect({ channel: 'notebook', mode: 'open', path: join(d.dir, 'k.ipynb'), peer_label: 'a' });
    connections.push(a.connection);
    const broadcasts: RuntimedFrame[] = [];
    a.connection.onFrame((frame) => broadcasts.push(frame));
    await waitFor(
      async () => ((await notebook(a.connection, { type: 'get_runtime' })).runtime as { state: string }).state,
      (state) => state === 'ready' || state === 'unavailable',
      'the kernel',
    );
    const { cell } = (await notebook(a.connection, { type: 'insert_cell', source: 'print("hi")\n1 + 1' })) as {
      cell: { id: string };
    };
    const started = await notebook(a.connection, { type: 'execute_cell', cell_id: cell.id });
    await waitFor(
      () => broadcasts.some((frame) => frame.event === 'execution_done'),
      (done) => done,
      'execution_done',
    );
    const final = await notebook(a.connection, { type: 'get_execution', execution_id: String(started.execution_id) });
    expect(final.status).toBe('ok');
    await notebook(a.connection, { type: 'interrupt' });
    await notebook(a.connection, { type: 'restart_kernel' });
    expect(broadcasts.map((frame) => frame.event)).toEqual(
      expect.arrayContaining(['runtime', 'cell_updated', 'output_set', 'execution_done']),
    );
    for (const frame of broadcasts) expectDescribed(wireRoomEventSchema, frame, ['type']);
  });

  it('answers requests whose fields break their schema with bad_request naming the field, and goes on', async () => {
    const d = await daemon(['--no-kernels']);
    const { connection } = await d.connect({
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'bad.ipynb'),
      peer_label: 'bad',
    });
    connections.push(connection);
    const refused = async (request: Readonly<Record<string, unknown>> & { readonly type: string }) => {
      const error = await refusal(connection.request(request));
      expect(error.code).toBe('bad_request');
      return error.message;
    };
    expect(await refused({ type: 'get_cell' })).toBe("Missing required string field 'cell_id'");
    expect(await refused({ type: 'get_cell', cell_id: 7 })).toBe("Field 'cell_id' must be a string, got 7");
    expect(await refused({ type: 'get_cell', cell_id: '' })).toBe("Field 'cell_id' must be a non-empty string");
    expect(await refused({ type: 'insert_cell', index: -1 })).toBe("Field 'index' must be a non-negative integer");
    expect(await refused({ type: 'insert_cell', cell_type: 'sql' })).toBe(
      `Field 'cell_type' must be 'code', 'markdown' or 'raw', got "sql"`,
    );
    expect(await refused({ type: 'insert_cell', source: ['a'] })).toBe("Field 'source' must be a string, got an array");
    expect(await refused({ type: 'move_cell', cell_id: 'x', after_cell_id: 3 })).toBe(
      "Field 'after_cell_id' must be a string or null",
    );
    expect(await refused({ type: 'get_execution' })).toBe("Missing required string field 'execution_id'");
    expect(await refused({ type: 'save', path: false })).toBe("Field 'path' must be a string, got false");
    expect(await refused({ type: 'execute_cell', cell_id: 'x', idempotency_key: 1 })).toBe(
      "Field 'idempotency_key' must be a string, got 1",
    );
    // Fields the schema does not name are tolerated (a newer client may send more).
    const answer = await notebook(connection, {
      type: 'insert_cell',
      source: 'ok',
      future_field: { deep: [1] },
    } as never);
    expect((answer.cell as { source: string }).source).toBe('ok');
    expect(connection.isClosed).toBe(false);

    const control = (await d.connect({ channel: 'control' })).connection;
    connections.push(control);
    expect((await refusal(control.request({ type: 'shutdown_notebook' }))).message).toBe(
      "Missing required string field 'notebook_id'",
    );
    expect((await control.request({ type: 'ping', extra: true })).pong).toBe(true);
  });

  it('refuses notebook handshakes whose fields break their schema with bad_request naming the field', async () => {
    const d = await daemon(['--no-kernels']);
    const handshake = async (frame: Record<string, unknown>) => {
      const error = await refusal(d.connect(frame as never));
      expect(error.code).toBe('bad_request');
      return error.message;
    };
    expect(await handshake({ channel: 'notebook', mode: 'open', peer_label: 'x' })).toBe(
      "Missing required string field 'path'",
    );
    expect(await handshake({ channel: 'notebook', mode: 'attach', notebook_id: 5, peer_label: 'x' })).toBe(
      "Field 'notebook_id' must be a string, got 5",
    );
    expect(await handshake({ channel: 'notebook', mode: 'attach', notebook_id: '\u0000', peer_label: 'x' })).toBe(
      `Field 'notebook_id' must be a notebook UUID, got "\\u0000"`,
    );
    expect(await handshake({ channel: 'notebook', mode: 'attach', notebook_id: '../../x', peer_label: 'x' })).toBe(
      `Field 'notebook_id' must be a notebook UUID, got "../../x"`,
    );
    expect(await handshake({ channel: 'notebook', mode: 'open', path: join(d.dir, 'a.ipynb'), peer_label: ' ' })).toBe(
      "Field 'peer_label' must be a non-empty string of at most 256 characters",
    );
    expect(await handshake({ channel: 'notebook', mode: 'create', ephemeral: 'yes', peer_label: 'x' })).toBe(
      `Field 'ephemeral' must be a boolean, got "yes"`,
    );
    expect(await handshake({ channel: 'notebook', mode: 'teleport', peer_label: 'x' })).toBe(
      `Unknown notebook mode "teleport": use 'open', 'attach' or 'create'`,
    );
  });
});
