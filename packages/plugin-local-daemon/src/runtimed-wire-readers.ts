import {
  type CellOutput,
  type CellType,
  CoreError,
  DaemonIncarnation,
  type DaemonInfo,
  type ExecutionState,
  type NotebookCell,
  type RoomInfo,
} from '@nteract-mcp/core';
import type { RuntimedFrame, WireRuntimeState } from '@nteract-mcp/runtimed-protocol';
import type { CellChange } from './retained-projection.js';

/*
 * Readers of daemon frames: snake_case wire shapes in, core's camelCase shapes out. Each reader
 * checks what it relies on and throws `protocolViolation` for a frame that does not have it, so a
 * broken daemon surfaces as a CoreError rather than as `undefined` deep inside a caller.
 */

const cellTypes: ReadonlySet<string> = new Set(['code', 'markdown', 'raw']);
const runtimeStates: ReadonlySet<string> = new Set(['not_started', 'starting', 'ready', 'stopped', 'unavailable']);
const executionStatuses: ReadonlySet<string> = new Set(['queued', 'running', 'ok', 'error', 'aborted']);

/** The execution statuses after which nothing changes any more. */
export type FinalExecutionStatus = 'ok' | 'error' | 'aborted';

/** Whether an execution status is one of {@link FinalExecutionStatus}. */
export function isFinalExecutionStatus(status: string): status is FinalExecutionStatus {
  return status === 'ok' || status === 'error' || status === 'aborted';
}

function violation(what: string, value: unknown): CoreError {
  return new CoreError('protocolViolation', `The daemon sent an invalid ${what}: ${describe(value)}`);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `frame[field]` as a string; throws `protocolViolation` otherwise. */
export function readString(frame: RuntimedFrame, field: string, what: string): string {
  const value = frame[field];
  if (typeof value !== 'string') throw violation(`${what} (field '${field}')`, frame);
  return value;
}

/** `frame[field]` as a string, `undefined` for null or absent; throws `protocolViolation` otherwise. */
export function readOptionalString(frame: RuntimedFrame, field: string, what: string): string | undefined {
  const value = frame[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw violation(`${what} (field '${field}')`, frame);
  return value;
}

/** `frame[field]` as a finite number; throws `protocolViolation` otherwise. */
export function readNumber(frame: RuntimedFrame, field: string, what: string): number {
  const value = frame[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw violation(`${what} (field '${field}')`, frame);
  return value;
}

/** `frame[field]` as an object; throws `protocolViolation` otherwise. */
export function readRecord(frame: RuntimedFrame, field: string, what: string): RuntimedFrame {
  const value = frame[field];
  if (!isRecord(value)) throw violation(`${what} (field '${field}')`, frame);
  return value;
}

/** The daemon's identity from a `hello` greeting or a `get_daemon_info` answer. */
export function readDaemonInfo(frame: RuntimedFrame): DaemonInfo {
  const pid = readNumber(frame, 'pid', 'daemon info');
  const startedAt = readString(frame, 'started_at', 'daemon info');
  let incarnation: DaemonIncarnation;
  try {
    incarnation = DaemonIncarnation.of(pid, startedAt);
  } catch (error) {
    throw new CoreError('protocolViolation', `The daemon sent an invalid identity: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    incarnation,
    version: readString(frame, 'version', 'daemon info'),
    protocolVersion: readNumber(frame, 'protocol_version', 'daemon info'),
  };
}

/** The incarnation a notebook greeting names (`daemon_pid`, `daemon_started_at`). */
export function readGreetingIncarnation(frame: RuntimedFrame): DaemonIncarnation {
  const pid = readNumber(frame, 'daemon_pid', 'notebook greeting');
  const startedAt = readString(frame, 'daemon_started_at', 'notebook greeting');
  try {
    return DaemonIncarnation.of(pid, startedAt);
  } catch (error) {
    throw new CoreError('protocolViolation', `The daemon sent an invalid identity: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** A `list_rooms` entry as core's {@link RoomInfo} (`null` becomes `undefined`). */
export function readRoomInfo(value: unknown): RoomInfo {
  if (!isRecord(value)) throw violation('room', value);
  const activePeers = readNumber(value, 'active_peers', 'room');
  if (typeof value.has_kernel !== 'boolean' || typeof value.ephemeral !== 'boolean') throw violation('room', value);
  return {
    notebookId: readString(value, 'notebook_id', 'room'),
    activePeers,
    hasKernel: value.has_kernel,
    kernelStatus: readOptionalString(value, 'kernel_status', 'room'),
    ephemeral: value.ephemeral,
    notebookPath: readOptionalString(value, 'notebook_path', 'room'),
  };
}

/** The `rooms` of a `list_rooms` answer. */
export function readRoomList(frame: RuntimedFrame): readonly RoomInfo[] {
  const rooms = frame.rooms;
  if (!Array.isArray(rooms)) throw violation("list_rooms answer (field 'rooms')", frame);
  return rooms.map(readRoomInfo);
}

/** A list of nbformat outputs (objects with a string `output_type`); other fields are passed through. */
export function readOutputs(value: unknown, what: string): readonly CellOutput[] {
  if (!Array.isArray(value)) throw violation(what, value);
  for (const output of value) {
    if (!isRecord(output) || typeof output.output_type !== 'string') throw violation(what, output);
  }
  return value as readonly CellOutput[];
}

/** One nbformat output (an object with a string `output_type`). */
export function readOutput(value: unknown, what: string): CellOutput {
  if (!isRecord(value) || typeof value.output_type !== 'string') throw violation(what, value);
  return value as CellOutput;
}

function readExecutionCount(frame: RuntimedFrame, what: string): number | null {
  const value = frame.execution_count;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number') throw violation(`${what} (field 'execution_count')`, frame);
  return value;
}

/** A wire cell (`cell_type`, `execution_count`) as core's {@link NotebookCell}. */
export function readCell(value: unknown): NotebookCell {
  if (!isRecord(value)) throw violation('cell', value);
  const cellType = value.cell_type;
  if (typeof cellType !== 'string' || !cellTypes.has(cellType)) throw violation("cell (field 'cell_type')", value);
  const metadata = value.metadata ?? {};
  if (!isRecord(metadata)) throw violation("cell (field 'metadata')", value);
  return {
    id: readString(value, 'id', 'cell'),
    cellType: cellType as CellType,
    source: readString(value, 'source', 'cell'),
    outputs: value.outputs === undefined ? [] : readOutputs(value.outputs, 'cell outputs'),
    executionCount: readExecutionCount(value, 'cell'),
    metadata,
  };
}

/** `frame.cells` as core cells. */
export function readCells(frame: RuntimedFrame, what: string): NotebookCell[] {
  const cells = frame.cells;
  if (!Array.isArray(cells)) throw violation(`${what} (field 'cells')`, frame);
  return cells.map(readCell);
}

/** A room's runtime (`state`, `kernel_status`, `reason`), unknown fields dropped. */
export function readRuntimeState(value: unknown): WireRuntimeState {
  if (!isRecord(value) || typeof value.state !== 'string' || !runtimeStates.has(value.state)) {
    throw violation('runtime state', value);
  }
  return {
    state: value.state as WireRuntimeState['state'],
    kernel_status: typeof value.kernel_status === 'string' ? value.kernel_status : null,
    ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
  };
}

/** A `get_execution` (or `execute_cell`) answer as core's {@link ExecutionState}. */
export function readExecutionState(frame: RuntimedFrame): ExecutionState {
  const status = readString(frame, 'status', 'execution');
  if (!executionStatuses.has(status)) throw violation("execution (field 'status')", frame);
  return {
    executionId: readString(frame, 'execution_id', 'execution'),
    cellId: readString(frame, 'cell_id', 'execution'),
    status: status as ExecutionState['status'],
    outputs: frame.outputs === undefined ? [] : readOutputs(frame.outputs, 'execution outputs'),
    executionCount: readExecutionCount(frame, 'execution'),
    ...(typeof frame.kernel_notice === 'string' && frame.kernel_notice !== ''
      ? { kernelNotice: frame.kernel_notice }
      : {}),
  };
}

/** The cell change a `cell_inserted`, `cell_updated`, `cell_deleted` or `cell_moved` broadcast carries. */
export function readCellChange(frame: RuntimedFrame): CellChange {
  const event = String(frame.event);
  switch (event) {
    case 'cell_inserted':
      return {
        kind: 'insert',
        cell: readCell(frame.cell),
        index: readNumber(frame, 'index', event),
        version: readNumber(frame, 'document_version', event),
      };
    case 'cell_updated':
      return { kind: 'update', cell: readCell(frame.cell), version: readNumber(frame, 'document_version', event) };
    case 'cell_deleted':
      return {
        kind: 'delete',
        cellId: readString(frame, 'cell_id', event),
        version: readNumber(frame, 'document_version', event),
      };
    case 'cell_moved':
      return {
        kind: 'move',
        cellId: readString(frame, 'cell_id', event),
        index: readNumber(frame, 'index', event),
        version: readNumber(frame, 'document_version', event),
      };
    default:
      throw violation('cell change', frame);
  }
}
