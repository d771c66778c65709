import type { RuntimedHandshake } from './runtimed-handshake.js';
import type { WireCell } from './wire-cell.js';
import type { WireCommentThread } from './wire-comment.js';
import type { WireControlAnswer } from './wire-control-answer.js';
import type { WireControlRequest, WireControlRequestType } from './wire-control-request.js';
import type { WireDaemonEvent } from './wire-daemon-event.js';
import type { WireExecutionState } from './wire-execution-state.js';
import type { WireControlHello, WireNotebookConnected } from './wire-greeting.js';
import type { WireNotebookAnswer } from './wire-notebook-answer.js';
import type { WireNotebookRequest, WireNotebookRequestType } from './wire-notebook-request.js';
import type { WireRoomEvent } from './wire-room-event.js';

/*
 * Frames shaped as the daemon and the client send them, one of every kind, typed with the inferred
 * types (so a fixture that drifts from its schema does not compile). For the schema specs and the
 * validation benchmark; not exported from the package.
 */

export function wireCellFixture(index: number, outputs = 1): WireCell {
  return {
    id: `cell-${index}`,
    cell_type: index % 5 === 0 ? 'markdown' : 'code',
    source: `x_${index} = ${index}\nprint(x_${index} * 2)\n`,
    outputs: Array.from({ length: outputs }, (_, n) => ({
      output_type: n % 2 === 0 ? 'stream' : 'execute_result',
      name: 'stdout',
      text: `${index * 2}\n`,
      ...(n % 2 === 0 ? {} : { data: { 'text/plain': String(index * 2) }, metadata: {}, execution_count: index }),
    })),
    execution_count: index,
    metadata: { tags: ['fixture'], collapsed: false },
  };
}

export const controlRequestFixtures = {
  ping: { type: 'ping' },
  get_daemon_info: { type: 'get_daemon_info' },
  list_rooms: { type: 'list_rooms' },
  list_kernels: { type: 'list_kernels' },
  shutdown_notebook: { type: 'shutdown_notebook', notebook_id: '6f1c2a9e-0000-4000-8000-000000000001' },
  subscribe: { type: 'subscribe' },
  shutdown_daemon: { type: 'shutdown_daemon' },
  get_page: { type: 'get_page', notebook_id: '00000000-0000-4000-8000-000000000001' },
  rotate_page_token: { type: 'rotate_page_token' },
} as const satisfies { [T in WireControlRequestType]: Extract<WireControlRequest, { type: T }> };

export const notebookRequestFixtures = {
  get_cells: { type: 'get_cells' },
  get_cell: { type: 'get_cell', cell_id: 'cell-1' },
  get_runtime: { type: 'get_runtime' },
  insert_cell: { type: 'insert_cell', source: 'x = 1', cell_type: 'code', index: 0, idempotency_key: 'k-1' },
  update_cell: { type: 'update_cell', cell_id: 'cell-1', source: 'x = 2', idempotency_key: 'k-2' },
  delete_cell: { type: 'delete_cell', cell_id: 'cell-1' },
  move_cell: { type: 'move_cell', cell_id: 'cell-1', after_cell_id: null },
  clear_outputs: { type: 'clear_outputs', cell_id: 'cell-1' },
  execute_cell: { type: 'execute_cell', cell_id: 'cell-1', idempotency_key: 'k-3' },
  get_execution: { type: 'get_execution', execution_id: 'e-1' },
  run_code: { type: 'run_code', source: 'print(1)' },
  start_code: { type: 'start_code', source: 'print(1)', allow_input: true },
  cancel_execution: { type: 'cancel_execution', execution_id: 'e-1' },
  interrupt: { type: 'interrupt' },
  restart_kernel: { type: 'restart_kernel' },
  save: { type: 'save', path: '/tmp/a.ipynb' },
  get_changes: { type: 'get_changes', since: 'r1.4' },
  undo: { type: 'undo', count: 2, idempotency_key: 'k-undo' },
  input_reply: { type: 'input_reply', execution_id: 'e-1', input_id: 'i-1', value: 'Ada' },
  add_comment: {
    type: 'add_comment',
    cell_id: 'cell-1',
    text: 'Why 3?',
    range: { start: 0, end: 5 },
    idempotency_key: 'k-c',
  },
  reply_comment: { type: 'reply_comment', thread_id: 't-1', text: 'Because.' },
  resolve_comment: { type: 'resolve_comment', thread_id: 't-1' },
  reopen_comment: { type: 'reopen_comment', thread_id: 't-1' },
  list_comments: { type: 'list_comments', cell_id: 'cell-1', include_resolved: true },
  leave: { type: 'leave' },
} as const satisfies { [T in WireNotebookRequestType]: Extract<WireNotebookRequest, { type: T }> };

const runtime = { state: 'ready', kernel_status: 'idle' } as const;
const commentThreadFixture: WireCommentThread = {
  id: 't-1',
  cell_id: 'cell-1',
  range: { start: 0, end: 5, quote: 'print', state: 'moved', now_start: 2, now_end: 7 },
  resolved: false,
  orphaned: false,
  messages: [
    { id: 'm-1', author: 'agent:claude:1', text: 'Why 3?', at: '2026-01-01T00:00:00.000Z' },
    { id: 'm-2', author: 'human:Ada', text: 'Because.', at: '2026-01-01T00:00:01.000Z' },
  ],
};
const execution: WireExecutionState = {
  execution_id: 'e-1',
  cell_id: 'cell-1',
  status: 'ok',
  outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }],
  execution_count: 3,
};

export const controlAnswerFixtures: { [T in WireControlRequestType]: WireControlAnswer<T> } = {
  ping: { pong: true, version: '0.1.0', protocol_version: 2 },
  get_daemon_info: { pid: 42, started_at: '2026-12-01T10:00:00.000Z', version: '0.1.0', protocol_version: 2 },
  list_rooms: {
    rooms: [
      {
        notebook_id: 'n-1',
        active_peers: 1,
        has_kernel: true,
        kernel_status: 'idle',
        ephemeral: false,
        notebook_path: '/tmp/a.ipynb',
        peer_labels: ['Claude Code agent:ada:s1'],
        runtime,
        kernel_name: 'python3',
        kernel_pid: 4242,
        last_saved: { at: '2026-12-01T10:05:00.000Z', path: '/tmp/a.ipynb' },
      },
      {
        notebook_id: 'n-2',
        active_peers: 0,
        has_kernel: false,
        kernel_status: null,
        ephemeral: true,
        notebook_path: null,
        file_conflict: 'changed on disk',
        last_saved: null,
      },
    ],
  },
  list_kernels: {
    kernels: [
      {
        name: 'ir',
        display_name: 'R',
        language: 'R',
        resource_dir: '/usr/share/jupyter/kernels/ir',
        available: false,
        reason: 'its program R was not found',
      },
      {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python',
        resource_dir: null,
        available: true,
      },
    ],
  },
  shutdown_notebook: { found: true },
  subscribe: { subscribed: true },
  shutdown_daemon: { stopping: true },
  get_page: {
    url: 'http://127.0.0.1:8765/',
    launch_url: 'http://127.0.0.1:8765/notebooks/00000000-0000-4000-8000-000000000001#launch=fixture',
  },
  rotate_page_token: { rotated: true },
};

export const notebookAnswerFixtures: { [T in WireNotebookRequestType]: WireNotebookAnswer<T> } = {
  get_cells: { document_version: 4, cells: [wireCellFixture(1), wireCellFixture(5, 0)] },
  get_cell: { cell: wireCellFixture(1) },
  get_runtime: { runtime: { state: 'unavailable', kernel_status: null, reason: 'no kernelspec' } },
  insert_cell: { cell: wireCellFixture(2), index: 1, document_version: 5, warning: 'journal kept aside' },
  update_cell: { cell: wireCellFixture(2), document_version: 6, replaced: { by: 'human:Ada', version: 'v-3' } },
  delete_cell: { document_version: 7 },
  move_cell: { index: 0, document_version: 8 },
  clear_outputs: { cell: wireCellFixture(2, 0), document_version: 9 },
  execute_cell: { ...execution, status: 'queued', outputs: [], execution_count: null, kernel_notice: 'new kernel' },
  get_execution: execution,
  start_code: { ...execution, cell_id: 'scratch', status: 'queued', outputs: [], execution_count: null },
  run_code: { status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text: '1\n' }] },
  cancel_execution: { execution_id: 'e-1', cancelled: 'interrupted' },
  interrupt: { interrupted: true, outcome: 'interrupted' },
  restart_kernel: { restarted: true, runtime },
  save: { notebook_id: 'n-1', notebook_path: '/tmp/a.ipynb' },
  get_changes: {
    cursor: 'r1.9',
    complete: true,
    changes: [
      {
        document_version: 5,
        at: '2026-12-01T10:00:00.000Z',
        by: 'human:Ada',
        kind: 'inserted',
        cell_id: 'c',
        index: 1,
      },
      { document_version: 9, at: '2026-12-01T10:00:01.000Z', by: 'agent:x:1', kind: 'ran', cell_id: 'c', status: 'ok' },
    ],
  },
  undo: {
    undone: [
      {
        document_version: 10,
        at: '2026-12-01T10:00:02.000Z',
        by: 'agent:x:1',
        kind: 'edited',
        cell_id: 'c',
        undo: true,
      },
    ],
    document_version: 10,
  },
  input_reply: { accepted: true },
  add_comment: { thread: commentThreadFixture },
  reply_comment: { thread: commentThreadFixture },
  resolve_comment: {
    thread: {
      ...commentThreadFixture,
      resolved: true,
      resolved_by: 'human:Ada',
      resolved_at: '2026-01-01T00:00:02.000Z',
    },
  },
  reopen_comment: { thread: commentThreadFixture },
  list_comments: { threads: [commentThreadFixture], total: 2, resolved: 1 },
  leave: { left: true },
};

/** The answer to a source edit, as a peer that declared `source_edits` receives it. */
export const sourceEditAnswerFixture: WireNotebookAnswer<'update_cell'> = {
  cell_source: { id: 'cell-2', cell_type: 'code', source: 'x_2 = 20', version: 'v-7', edited_by: 'agent:x:1' },
  document_version: 6,
  replaced: { by: 'human:Ada', version: 'v-3' },
};

export const roomEventFixtures: readonly WireRoomEvent[] = [
  { event: 'cell_inserted', document_version: 1, index: 0, cell: wireCellFixture(1) },
  { event: 'cell_updated', document_version: 2, cell: wireCellFixture(1) },
  {
    event: 'cell_source_set',
    document_version: 3,
    cell: { id: 'cell-1', cell_type: 'code', source: 'x_1 = 10', version: 'v-4', edited_by: 'agent:x:1' },
  },
  { event: 'cell_deleted', document_version: 3, cell_id: 'cell-1' },
  { event: 'cell_moved', document_version: 4, cell_id: 'cell-2', index: 0 },
  { event: 'runtime', runtime },
  { event: 'saved', notebook_path: '/tmp/a.ipynb' },
  {
    event: 'execution_output',
    execution_id: 'e-1',
    cell_id: 'cell-1',
    output: {
      output_type: 'display_data',
      data: { 'image/png': 'iVBORw0KGgo=', 'text/plain': '<Figure>' },
      metadata: {},
    },
  },
  { event: 'execution_done', execution_id: 'e-1', cell_id: 'cell-1', status: 'error', execution_count: 3 },
  {
    event: 'input_request',
    execution_id: 'e-1',
    input_id: 'i-1',
    cell_id: 'cell-1',
    prompt: 'name? ',
    password: false,
  },
  { event: 'peer_joined', peer_id: 'p-1', peer_label: 'Claude agent:x:1', active_peers: 2 },
  { event: 'peer_left', peer_id: 'p-1', peer_label: 'Claude agent:x:1', active_peers: 1 },
  { event: 'presence', peer_id: 'p-2', peer_label: 'human:Ada', cell_id: 'cell-1' },
  {
    event: 'conditions',
    conditions: [
      { kind: 'autosave_failing', message: 'Autosave failed: disk full', since: '2026-01-01T00:00:00.000Z' },
    ],
  },
  { event: 'notice', message: 'The file was reloaded' },
  { event: 'comment_thread', action: 'replied', peer_id: 'p-2', peer_label: 'human:Ada', thread: commentThreadFixture },
];

export const daemonEventFixtures: readonly WireDaemonEvent[] = [
  { event: 'room_opened', notebook_id: 'n-1' },
  { event: 'room_closed', notebook_id: 'n-1' },
  { event: 'peer_joined', notebook_id: 'n-1', peer_label: 'a', active_peers: 1 },
  { event: 'peer_left', notebook_id: 'n-1', peer_label: 'a', active_peers: 0, departure: 'vanished' },
  { event: 'kernel_status', notebook_id: 'n-1', runtime },
  { event: 'daemon_shutting_down' },
];

export const handshakeFixtures: readonly RuntimedHandshake[] = [
  { channel: 'control' },
  { channel: 'notebook', mode: 'open', path: '/tmp/a.ipynb', peer_label: 'a' },
  {
    channel: 'notebook',
    mode: 'open',
    path: '/tmp/b.ipynb',
    peer_label: 'b',
    blob_references: true,
    source_edits: true,
  },
  { channel: 'notebook', mode: 'attach', notebook_id: '6f1c2a9e-0000-4000-8000-000000000001', peer_label: 'a' },
  { channel: 'notebook', mode: 'create', runtime: 'python', working_dir: '/tmp', ephemeral: false, peer_label: 'a' },
];

export const helloFixture: WireControlHello = { type: 'hello', ...controlAnswerFixtures.get_daemon_info };

export const connectedFixture: WireNotebookConnected = {
  type: 'connected',
  notebook_id: 'n-1',
  notebook_path: null,
  ephemeral: true,
  document_version: 0,
  cells: [wireCellFixture(1)],
  runtime: { state: 'not_started', kernel_status: null },
  peer_id: 'p-1',
  daemon_pid: 42,
  daemon_started_at: '2026-12-01T10:00:00.000Z',
};
