/**
 * The JSON shapes of the daemon protocol (snake_case on the wire). See the daemon README for the
 * full description of each request and broadcast.
 */

/** The first frame of a connection: which channel, and for notebooks which room. */
export type RuntimedHandshake =
  | { readonly channel: 'control' }
  | { readonly channel: 'notebook'; readonly mode: 'open'; readonly path: string; readonly peer_label: string }
  | { readonly channel: 'notebook'; readonly mode: 'attach'; readonly notebook_id: string; readonly peer_label: string }
  | {
      readonly channel: 'notebook';
      readonly mode: 'create';
      readonly runtime: string;
      readonly working_dir: string;
      readonly ephemeral?: boolean;
      readonly peer_label: string;
    };

/**
 * The requests of the `notebook` channel. `leave` is a peer's goodbye before it closes the
 * connection on purpose (answer `{left: true}`, then the daemon ends the connection): the room then
 * keeps its kernel for the normal keep-alive. A connection that ends without `leave` is a vanished
 * peer (a crashed client), for which the kernel is kept longer so the client can come back to it.
 */
export const wireNotebookRequestTypes = [
  'get_cells',
  'get_cell',
  'get_runtime',
  'insert_cell',
  'update_cell',
  'delete_cell',
  'move_cell',
  'clear_outputs',
  'execute_cell',
  'get_execution',
  'interrupt',
  'restart_kernel',
  'save',
  'leave',
] as const;
export type WireNotebookRequestType = (typeof wireNotebookRequestTypes)[number];

/** The requests of the `control` channel. */
export const wireControlRequestTypes = [
  'ping',
  'get_daemon_info',
  'list_rooms',
  'shutdown_notebook',
  'subscribe',
  'shutdown_daemon',
] as const;
export type WireControlRequestType = (typeof wireControlRequestTypes)[number];

/** Machine-readable reasons in error frames. */
export type RuntimedErrorCode =
  | 'bad_preamble'
  | 'unsupported_protocol'
  | 'bad_frame'
  | 'oversized_frame'
  | 'oversized_message'
  | 'unknown_channel'
  | 'bad_request'
  | 'unknown_request'
  | 'notebook_unavailable'
  | 'load_failed'
  | 'path_already_open'
  | 'no_path'
  | 'cell_not_found'
  | 'runtime_unavailable'
  | 'idempotency_conflict'
  | 'execution_not_found'
  | 'file_conflict'
  | 'shutting_down'
  | 'internal';

/** An error answer. With an `id` it answers that request; without, it ends the connection. */
export interface RuntimedErrorFrame {
  readonly type: 'error';
  readonly id?: number;
  readonly code: RuntimedErrorCode;
  readonly message: string;
}

export interface WireDaemonInfo {
  readonly pid: number;
  /** RFC 3339, fixed for the life of the daemon process. */
  readonly started_at: string;
  readonly version: string;
  readonly protocol_version: number;
}

export interface WireRoomInfo {
  readonly notebook_id: string;
  readonly active_peers: number;
  readonly has_kernel: boolean;
  readonly kernel_status: string | null;
  readonly ephemeral: boolean;
  readonly notebook_path: string | null;
  /** Set while the notebook's file was changed by another program under unsaved edits: what to do. */
  readonly file_conflict?: string;
}

/** One nbformat 4 output as it travels and is stored (`stream`, `display_data`, `execute_result`, `error`). */
export type WireOutput = Readonly<Record<string, unknown>> & { readonly output_type: string };

export interface WireCell {
  readonly id: string;
  readonly cell_type: 'code' | 'markdown' | 'raw';
  readonly source: string;
  readonly outputs: readonly Readonly<Record<string, unknown>>[];
  readonly execution_count: number | null;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** The kernel side of a room. `unavailable` carries the reason (e.g. no kernelspec with ipykernel). */
export interface WireRuntimeState {
  readonly state: 'not_started' | 'starting' | 'ready' | 'stopped' | 'unavailable';
  readonly kernel_status: string | null;
  readonly reason?: string;
}

/** The daemon's answer to a notebook handshake. */
export interface WireNotebookConnected {
  readonly type: 'connected';
  readonly notebook_id: string;
  readonly notebook_path: string | null;
  readonly ephemeral: boolean;
  readonly document_version: number;
  readonly cells: readonly WireCell[];
  readonly runtime: WireRuntimeState;
  readonly peer_id: string;
  /** The daemon life this connection belongs to (its incarnation). */
  readonly daemon_pid: number;
  readonly daemon_started_at: string;
}

/** The daemon's answer to a control handshake. */
export interface WireControlHello extends WireDaemonInfo {
  readonly type: 'hello';
}

/** What a room's peers are told when something changes (`type: 'broadcast'` frames carry one). */
export type WireRoomEvent =
  | {
      readonly event: 'cell_inserted';
      readonly document_version: number;
      readonly index: number;
      readonly cell: WireCell;
    }
  | { readonly event: 'cell_updated'; readonly document_version: number; readonly cell: WireCell }
  | { readonly event: 'cell_deleted'; readonly document_version: number; readonly cell_id: string }
  | {
      readonly event: 'cell_moved';
      readonly document_version: number;
      readonly cell_id: string;
      readonly index: number;
    }
  | { readonly event: 'runtime'; readonly runtime: WireRuntimeState }
  | { readonly event: 'saved'; readonly notebook_path: string }
  | {
      readonly event: 'execution_output';
      readonly execution_id: string;
      readonly cell_id: string;
      readonly output: Readonly<Record<string, unknown>>;
    }
  | {
      readonly event: 'execution_done';
      readonly execution_id: string;
      readonly cell_id: string;
      readonly status: 'ok' | 'error' | 'aborted';
      readonly execution_count: number | null;
    }
  | {
      readonly event: 'peer_joined' | 'peer_left';
      readonly peer_id: string;
      readonly peer_label: string;
      readonly active_peers: number;
    };

/** What `subscribe` on the control channel streams (`type: 'event'` frames carry one). */
export type WireDaemonEvent =
  | { readonly event: 'room_opened' | 'room_closed'; readonly notebook_id: string }
  | {
      readonly event: 'peer_joined' | 'peer_left';
      readonly notebook_id: string;
      readonly peer_label: string;
      readonly active_peers: number;
      /** On `peer_left`: whether the peer sent `leave` first or its connection just ended. */
      readonly departure?: 'left' | 'vanished';
    }
  | { readonly event: 'kernel_status'; readonly notebook_id: string; readonly runtime: WireRuntimeState }
  | { readonly event: 'daemon_shutting_down' };
