import { ResultShaper } from '@nteract-mcp/output-shaping';
import * as z from 'zod';
import { idempotencyHonoredMeta } from '../../handoff/handoff-contract.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { isPythonKernel, type LostKernelState, lostStateJson } from '../executions/kernel-history.js';
import { subKey } from '../idempotency-sub-key.js';
import { defineChildTool, type RegisteredChildTool } from './child-tool-registry.js';
import { imagesParameter } from './output-parameters.js';
import { runCell } from './run-cell.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';

/** Seconds `restore_state` waits for all its cells unless `timeout_secs` says otherwise. */
export const defaultRestoreTimeoutSecs = 300;

/**
 * The notebook's lost kernel state as known now: a replacement the handle has not told through an
 * execution yet (its pending `kernelNotice`) is recorded first. Shared by `restore_state` and
 * `session_status`.
 */
export function lostKernelStateOf(deps: ChildServerDependencies, handle: NotebookHandle): LostKernelState | undefined {
  const pending = handle.kernelNotice;
  if (pending !== undefined) {
    return deps.kernelHistory.replaced(handle.notebookId, pending, isPythonKernel(handle.kernelName), true);
  }
  return deps.kernelHistory.lost(handle.notebookId);
}

/**
 * `restore_state`: after a kernel was replaced (culled, restarted, its server restarted), runs
 * again, in order, the code cells this server had run in the lost kernel ({@link KernelHistory}),
 * or the range of them from `from_cell_id` to `to_cell_id`, each as an execution with progress
 * (like `run_all_cells`), stopping at the first error. Each cell runs with its source as it is now.
 */
export function createRestoreTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const restoreState = defineChildTool({
    name: 'restore_state',
    session: 'runtime',
    description: `After the active notebook's kernel was replaced (culled for idleness, restarted, its server restarted: a kernel_notice says so), run again, in order, the code cells this agent had run in the lost kernel, to bring back their variables, functions and imports; from_cell_id/to_cell_id choose a range of them. Stops at the first error. timeout_secs (default ${defaultRestoreTimeoutSecs}) bounds the whole run.`,
    inputSchema: z.object({
      from_cell_id: toolParameters.optionalString(
        'First cell of the range to run again (default: the first that ran).',
      ),
      to_cell_id: toolParameters.optionalString('Last cell of the range to run again (default: the last that ran).'),
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for all cells (default ${defaultRestoreTimeoutSecs}).`,
      ),
      images: imagesParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const deadline = deps.clock.now() + (given(args.timeout_secs) ?? defaultRestoreTimeoutSecs) * 1000;
      const access = await accessWhenReady(deps, 'runtime', context);
      const { handle } = access;
      const lost = lostKernelStateOf(deps, handle);
      if (lost === undefined) {
        throw new ToolError(
          `Nothing to restore in notebook ${handle.notebookId}: no kernel that ran this agent's cells was replaced since they ran (this server remembers the cells it ran itself, since it started).`,
        );
      }
      const runs = chosenRange(lost, given(args.from_cell_id), given(args.to_cell_id));
      const present = new Map((await handle.listCells()).map((cell) => [cell.id, cell]));
      access.ensureCurrent();
      const shaper = new ResultShaper({ images: given(args.images), resultBudgetBytes: deps.resultBudgetBytes });
      const executions: Record<string, unknown>[] = [];
      const missing: string[] = [];
      let status = 'done';
      let index = 0;
      for (; index < runs.length; index += 1) {
        const cellId = runs[index] as string;
        const cell = present.get(cellId);
        if (cell === undefined || cell.cellType !== 'code') {
          missing.push(cellId);
          continue;
        }
        const remainingMs = deadline - deps.clock.now();
        if (remainingMs <= 0) {
          status = 'running';
          break;
        }
        const execution = await runCell(deps, access, cellId, {
          source: cell.source,
          timeoutSecs: remainingMs / 1000,
          idempotencyKey: subKey(context, `restore:${cellId}`),
          shaper,
          context,
        });
        executions.push(execution);
        if (execution.status !== 'done') {
          status = execution.status === 'running' ? 'running' : 'error';
          index += 1;
          break;
        }
      }
      const notRun = runs.slice(index);
      return shaper.result({
        notebook_id: handle.notebookId,
        status,
        restored_from: lost.reason,
        executions,
        ...(missing.length > 0
          ? { skipped: missing, skipped_note: 'These cells are no longer code cells of the notebook.' }
          : {}),
        ...(notRun.length > 0 ? { not_run: notRun } : {}),
        ...(status === 'error'
          ? { hint: 'Stopped at the first error: fix that cell, then restore_state(from_cell_id=...) runs the rest.' }
          : {}),
        ...(status === 'running'
          ? { hint: 'Stopped waiting at the timeout; read the running cell with get_results(execution_id=...).' }
          : {}),
        ...(status === 'done' ? { restored: restoredNames(lost) } : {}),
      });
    },
  });
  return [restoreState];
}

/** The cell ids of the lost runs from `from` to `to` (inclusive); a tool error names an id that did not run there. */
function chosenRange(lost: LostKernelState, from: string | undefined, to: string | undefined): string[] {
  const ids = lost.runs.map((run) => run.cellId);
  const at = (id: string | undefined, fallback: number): number => {
    if (id === undefined) return fallback;
    const index = ids.indexOf(id);
    if (index < 0) {
      throw new ToolError(
        `Cell ${id} did not run in the lost kernel; the cells that did, in order: ${ids.join(', ')}.`,
      );
    }
    return index;
  };
  const first = at(from, 0);
  const last = at(to, ids.length - 1);
  if (last < first) throw new ToolError(`to_cell_id ${to} ran before from_cell_id ${from}; give them in run order.`);
  return ids.slice(first, last + 1);
}

/** What the restored cells define again (the lost state without its advice). */
function restoredNames(lost: LostKernelState): unknown {
  const { summary: _summary, ...names } = (lostStateJson(lost).lost_state ?? {}) as Record<string, unknown>;
  return names;
}
