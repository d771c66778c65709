import {
  type CellActivity,
  type CellType,
  CoreError,
  DaemonIncarnation,
  type DaemonInfo,
  type ExecutionState,
  type KernelInfo,
  type ListedNotebook,
  type NotebookCell,
  type NotebookCellChange,
  type NotebookReadiness,
} from '@nteract-mcp/core';
import {
  parseFromDaemon,
  type WireCell,
  type WireCellChange,
  type WireCellSource,
  type WireDaemonInfo,
  type WireExecutionState,
  type WireFinalExecutionStatus,
  type WireKernelspec,
  type WireNotebookAnswer,
  type WireRoomEvent,
  type WireRoomInfo,
  type WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import type { CellChange, CellSource } from './retained-projection.js';
import { toCoreError } from './to-core-error.js';

/*
 * From daemon frames to core's shapes. The frames are read with the protocol's schemas (one
 * definition of what a frame must hold; a frame without it is `protocolViolation` naming the
 * field); what is left here is the mapping of snake_case wire values to core's camelCase ones.
 */

/** The execution statuses after which nothing changes any more. */
export type FinalExecutionStatus = WireFinalExecutionStatus;

/** Whether an execution status is one of {@link FinalExecutionStatus}. */
export function isFinalExecutionStatus(status: string): status is FinalExecutionStatus {
  return status === 'ok' || status === 'error' || status === 'aborted';
}

/** {@link parseFromDaemon}, failing with core's `protocolViolation` instead of the protocol's error. */
export const readFromDaemon: typeof parseFromDaemon = (schema, value, what) => {
  try {
    return parseFromDaemon(schema, value, what);
  } catch (error) {
    throw toCoreError(error);
  }
};

/** The daemon life a pid and start time name; an impossible pair is `protocolViolation`. */
export function toIncarnation(pid: number, startedAt: string): DaemonIncarnation {
  try {
    return DaemonIncarnation.of(pid, startedAt);
  } catch (error) {
    throw new CoreError('protocolViolation', `The daemon sent an invalid identity: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The daemon's identity from a `hello` greeting or a `get_daemon_info` answer. */
export function toDaemonInfo(wire: WireDaemonInfo): DaemonInfo {
  return {
    incarnation: toIncarnation(wire.pid, wire.started_at),
    version: wire.version,
    protocolVersion: wire.protocol_version,
  };
}

/** A `list_rooms` entry as core's {@link ListedNotebook} (`null` becomes `undefined`). */
export function toRoomInfo(wire: WireRoomInfo): ListedNotebook {
  return {
    notebookId: wire.notebook_id,
    activePeers: wire.active_peers,
    hasKernel: wire.has_kernel,
    kernelStatus: wire.kernel_status ?? undefined,
    ephemeral: wire.ephemeral,
    notebookPath: wire.notebook_path ?? undefined,
    ...(wire.working_dir === undefined ? {} : { workingDir: wire.working_dir }),
    ...(wire.kernel_interpreter === undefined ? {} : { kernelInterpreter: wire.kernel_interpreter }),
    ...(wire.peers === undefined
      ? {}
      : {
          peers: wire.peers.map((peer) => ({
            label: peer.label,
            cellId: peer.cell_id,
            runningCellId: peer.running_cell_id,
          })),
        }),
  };
}

/** A `list_kernels` entry as core's {@link KernelInfo}. */
export function toKernelInfo(wire: WireKernelspec): KernelInfo {
  return {
    name: wire.name,
    displayName: wire.display_name,
    language: wire.language,
    location: wire.resource_dir ?? undefined,
    available: wire.available,
    ...(wire.reason === undefined ? {} : { reason: wire.reason }),
    ...(wire.interpreter === undefined ? {} : { interpreter: wire.interpreter }),
    ...(wire.virtualenv === undefined ? {} : { virtualenv: wire.virtualenv }),
  };
}

/** A wire cell (`cell_type`, `execution_count`) as core's {@link NotebookCell}. */
export function toNotebookCell(wire: WireCell): NotebookCell {
  return {
    id: wire.id,
    cellType: wire.cell_type satisfies CellType,
    source: wire.source,
    outputs: wire.outputs,
    executionCount: wire.execution_count,
    metadata: wire.metadata,
    ...(wire.edited_by === undefined ? {} : { editedBy: wire.edited_by }),
    ...(wire.version === undefined ? {} : { version: wire.version }),
  };
}

/** A source edit's fields (a `cell_source_set` broadcast, a `cell_source` answer) as core's names them. */
export function toCellSource(wire: WireCellSource): CellSource {
  return {
    id: wire.id,
    cellType: wire.cell_type satisfies CellType,
    source: wire.source,
    ...(wire.edited_by === undefined ? {} : { editedBy: wire.edited_by }),
    ...(wire.version === undefined ? {} : { version: wire.version }),
  };
}

/**
 * The change an `update_cell` answer names: the whole cell, or (to a peer that declared
 * `source_edits`, for an edit that kept the cell's type) the source edit's fields.
 */
export function toUpdateChange(
  answer: WireNotebookAnswer<'update_cell'>,
): Extract<CellChange, { kind: 'update' | 'source' }> {
  const version = answer.document_version;
  return 'cell_source' in answer
    ? { kind: 'source', cell: toCellSource(answer.cell_source), version }
    : { kind: 'update', cell: toNotebookCell(answer.cell), version };
}

/** A `get_changes` (or `undo`) entry as core's {@link CellActivity}. */
export function toCellActivity(wire: WireCellChange): CellActivity {
  return {
    documentVersion: wire.document_version,
    at: wire.at,
    by: wire.by,
    kind: wire.kind,
    cellId: wire.cell_id,
    ...(wire.index === undefined ? {} : { index: wire.index }),
    ...(wire.status === undefined ? {} : { status: wire.status }),
    ...(wire.undo === undefined ? {} : { undo: true }),
  };
}

/** A `get_execution` (or `execute_cell`) answer as core's {@link ExecutionState}. */
export function toExecutionState(wire: WireExecutionState): ExecutionState {
  return {
    executionId: wire.execution_id,
    cellId: wire.cell_id,
    status: wire.status,
    outputs: wire.outputs,
    executionCount: wire.execution_count,
    ...(wire.kernel_notice === undefined || wire.kernel_notice === '' ? {} : { kernelNotice: wire.kernel_notice }),
  };
}

/** The cell change a `cell_inserted`, `cell_updated`, `cell_source_set`, `cell_deleted` or `cell_moved` broadcast carries. */
export function toCellChange(
  event: Extract<
    WireRoomEvent,
    { event: 'cell_inserted' | 'cell_updated' | 'cell_source_set' | 'cell_deleted' | 'cell_moved' }
  >,
): CellChange {
  switch (event.event) {
    case 'cell_inserted':
      return { kind: 'insert', cell: toNotebookCell(event.cell), index: event.index, version: event.document_version };
    case 'cell_updated':
      return { kind: 'update', cell: toNotebookCell(event.cell), version: event.document_version };
    case 'cell_source_set':
      return { kind: 'source', cell: toCellSource(event.cell), version: event.document_version };
    case 'cell_deleted':
      return { kind: 'delete', cellId: event.cell_id, version: event.document_version };
    case 'cell_moved':
      return { kind: 'move', cellId: event.cell_id, index: event.index, version: event.document_version };
  }
}

/** What the handle's listeners are told of a change applied to its copy. */
export function toCellNotice(change: CellChange): NotebookCellChange {
  switch (change.kind) {
    case 'insert':
      return { kind: 'inserted', cellId: change.cell.id };
    case 'update':
    case 'source':
      return { kind: 'updated', cellId: change.cell.id };
    case 'delete':
      return { kind: 'deleted', cellId: change.cellId };
    case 'move':
      return { kind: 'moved', cellId: change.cellId };
    case 'outputs':
    case 'count':
      return { kind: 'updated', cellId: change.cellId };
  }
}

/**
 * A room's readiness from the daemon's runtime state (the document is `ready`: the greeting carries
 * it whole): `ready` and `stopped` are `ready` (a stopped kernel restarts on the next execution),
 * except a `stopped` whose kernel failed to start (`kernel_status: 'failed'`), which is `failed`;
 * `unavailable` is `unavailable` with the daemon's reason, `not_started` and `starting` are
 * `pending` with a reason that says so (a room just opened, e.g. after a daemon restart, starts
 * its kernel in the background).
 */
export function toReadiness(runtime: WireRuntimeState): NotebookReadiness {
  const { state, reason } = runtime;
  if (state === 'unavailable') {
    return { document: 'ready', runtime: 'unavailable', reason: reason ?? 'no kernel is available' };
  }
  if (state === 'starting') return { document: 'ready', runtime: 'pending', reason: 'the kernel is starting' };
  if (state === 'not_started') return { document: 'ready', runtime: 'pending', reason: 'no kernel started yet' };
  if (state === 'stopped' && runtime.kernel_status === 'failed') {
    return { document: 'ready', runtime: 'failed', reason: reason ?? 'the kernel failed to start' };
  }
  return { document: 'ready', runtime: 'ready' };
}
