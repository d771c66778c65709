import type { ResultShaper } from '@nteract-mcp/output-shaping';
import { CoreError } from '../../errors/core-error.js';
import type { SessionAccess } from '../../session/session-slot.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { ExecutionProgress } from '../executions/execution-progress.js';
import { type ExecutionRecord, executionRecordOf } from '../executions/execution-store.js';
import { isPythonKernel, lostStateJson } from '../executions/kernel-history.js';
import type { ToolCallContext } from './child-tool-registry.js';
import { readExecutionOutputs } from './output-parameters.js';
import { ToolError } from './to-tool-failure.js';

/** How one cell is run by a tool. */
export interface RunCellOptions {
  readonly timeoutSecs: number;
  readonly idempotencyKey: string | undefined;
  /** Run only while the cell still has this version. */
  readonly expectedVersion?: string | undefined;
  /** The cell's source as the caller read it (else it is read here, for the kernel history). */
  readonly source?: string;
  readonly shaper: ResultShaper;
  readonly context: ToolCallContext;
}

/**
 * Runs one cell on the accessed session, records the execution (the execution store, and the
 * notebook's {@link KernelHistory}) and renders it; when it ran in a new kernel, the answer also
 * says what the lost kernel had defined (`lost_state`).
 */
export async function runCell(
  deps: ChildServerDependencies,
  access: SessionAccess,
  cellId: string,
  options: RunCellOptions,
): Promise<Record<string, unknown>> {
  const { handle } = access;
  const source =
    options.source ??
    (await handle.getCell(cellId).then(
      (cell) => cell.source,
      () => undefined,
    ));
  // Progress per output and keep-alives while the cell is silent; the client's cancellation of
  // this call cancels the execution it started.
  const progress = new ExecutionProgress({ clock: deps.clock, context: options.context, cellId });
  const result = await handle
    .executeCell(cellId, {
      timeoutMs: Math.round(options.timeoutSecs * 1000),
      idempotencyKey: options.idempotencyKey,
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
      onStarted: (executionId) => {
        progress.started(executionId);
        options.context.onExecution?.(executionId);
      },
      onOutput: () => progress.output(),
      signal: options.context.cancelled,
      // The person answers the code's input() when the client can be asked.
      ...(options.context.allowInput === true ? { allowInput: true } : {}),
    })
    .finally(() => progress.stop());
  const record = executionRecordOf(result, handle.notebookId);
  deps.executions.record(record);
  const lost = deps.kernelHistory.ran(
    handle.notebookId,
    source === undefined || result.status === 'aborted' ? undefined : { cellId: result.cellId, source },
    result.kernelNotice,
    isPythonKernel(handle.kernelName),
  );
  try {
    access.ensureCurrent();
  } catch (error) {
    if (!CoreError.is(error)) throw error;
    throw new ToolError(
      `${error.message} The execution ran in notebook ${record.notebookId}: read it with get_results(execution_id="${record.executionId}").`,
      { cause: error },
    );
  }
  return { ...executionJson(record, options.shaper), ...lostStateJson(lost) };
}

/** An execution as the tools show it; its outputs shaped by `shaper`, or left out (for a page of them) without one. */
export function executionJson(record: ExecutionRecord, shaper: ResultShaper | undefined): Record<string, unknown> {
  const unfinished = record.status === 'running' || record.status === 'queued';
  return {
    cell_id: record.cellId,
    execution_id: record.executionId,
    notebook_id: record.notebookId,
    status: record.status,
    execution_count: record.executionCount,
    ...(record.kernelNotice === undefined ? {} : { kernel_notice: record.kernelNotice }),
    ...(record.note === undefined ? {} : { note: record.note }),
    ...(shaper === undefined
      ? {}
      : { outputs: shaper.shapeOutputs(record.outputs, readExecutionOutputs(record.executionId)) }),
    ...(unfinished && shaper !== undefined
      ? {
          hint: `Still ${record.status}; outputs so far are shown. Call get_results(execution_id="${record.executionId}") for the rest.`,
        }
      : {}),
  };
}
