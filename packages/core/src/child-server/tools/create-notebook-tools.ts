import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ResultShaper } from '@nteract-mcp/output-shaping';
import * as z from 'zod';
import { idempotencyHonoredMeta } from '../../handoff/handoff-contract.js';
import { describeMiB } from '../../handoff/mcp-message-limits.js';
import type {
  CellType,
  ExecutionPage,
  NotebookCell,
  NotebookHandle,
  UpdatedCell,
} from '../../ports/notebook-handle.js';
import type { SessionAccess } from '../../session/session-slot.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { type ExecutionRecord, executionRecordOf } from '../executions/execution-store.js';
import { isPythonKernel, lostStateJson } from '../executions/kernel-history.js';
import { subKey } from '../idempotency-sub-key.js';
import type { ToolCallContext } from '../tool-call-context.js';
import {
  type ConfirmationQuestion,
  defineChildTool,
  jsonResult,
  type RegisteredChildTool,
  textResult,
} from './child-tool-registry.js';
import { imagesParameter, pagingParameters } from './output-parameters.js';
import { outputsPageRequest, pageOfExecution, pageOfOutputs } from './page-of-outputs.js';
import { executionJson, runCell } from './run-cell.js';
import {
  defaultCellsAnswerBytes,
  defaultCellsAnswerReason,
  type RenderedCell,
  renderCell,
  renderCellsRich,
  summarizeCells,
} from './summarize-cells.js';
import { ToolError } from './to-tool-failure.js';
import { cellTypeParameter, given, toolParameters } from './tool-parameters.js';
import { escapedBytes } from './tool-result-budget.js';
import { expectedVersionParameter, replacedText, staleRunText, writeVersions } from './write-versions.js';

/** Seconds a single execution is waited for unless `timeout_secs` says otherwise. */
export const defaultExecuteTimeoutSecs = 30;

/** Seconds `run_all_cells` waits for the whole notebook unless `timeout_secs` says otherwise. */
export const defaultRunAllTimeoutSecs = 300;

/**
 * The notebook tools. Each works on the active session through `slot.access(requirement)`
 * (`document` for reads, `mutation` for edits, `runtime` for execution and kernel control; edits
 * and runs wait, bounded, for a session still starting: {@link accessWhenReady}) and
 * re-checks `ensureCurrent()` after awaiting before it reports on "the active notebook".
 * Mutations carry the call's idempotency key; a tool with several mutations derives
 * `<key>:insert`, `<key>:update`, `<key>:execute`… so a replay applies each once. `get_results`
 * works without an active session.
 */
export function createNotebookTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  /** The output shaping of one call (`images`: its parameter), within `budgetBytes` (default: a whole result's). */
  const shaperFor = (images: boolean | null | undefined, budgetBytes = deps.resultBudgetBytes): ResultShaper =>
    new ResultShaper({ images: given(images), resultBudgetBytes: budgetBytes });

  const getCell = defineChildTool({
    name: 'get_cell',
    shows: 'cells',
    session: 'document',
    description:
      'Read one cell of the active notebook: source, type, execution count and outputs (images as image content, long texts cut in the middle, many outputs summarized); with offset (and length) its outputs as one text, in pages.',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell id.'),
      images: imagesParameter,
      ...pagingParameters,
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const access = deps.slot.access('document');
      const cell = await access.handle.getCell(args.cell_id);
      access.ensureCurrent();
      deps.awareness.saw(access.handle.notebookId, [cell]);
      const shaper = shaperFor(args.images);
      const offset = given(args.offset);
      if (offset !== undefined) {
        return jsonResult({
          cell_id: cell.id,
          cell_type: cell.cellType,
          execution_count: cell.executionCount,
          outputs_page: pageOfOutputs(cell.outputs, offset, given(args.length), deps.resultBudgetBytes),
        });
      }
      return shaper.result(renderCell(cell, { includeOutputs: true, shaper }));
    },
  });

  const getAllCells = defineChildTool({
    name: 'get_all_cells',
    session: 'document',
    description: `Read the cells of the active notebook. format 'summary' (default): one line per cell; 'json': cells as JSON; 'rich': sources and outputs as text. start/count select a window. Without count, an answer lists about ${defaultCellsAnswerBytes / 1024} KiB of cells (a summary at most 500 lines) and its last line or 'truncated' names the start of the next. Outputs are shaped as in get_cell.`,
    inputSchema: z.object({
      format: z.enum(['summary', 'json', 'rich']).nullish().describe("'summary' (default), 'json' or 'rich'."),
      start: toolParameters.optionalIndex('Index of the first cell (default 0).'),
      count: toolParameters.optionalIndex(
        `How many cells (default: those that fit in about ${defaultCellsAnswerBytes / 1024} KiB; with count, up to the limit of one tool result).`,
      ),
      include_outputs: toolParameters.optionalBoolean("Include outputs in 'json' and 'rich' (default true)."),
      preview_chars: toolParameters.optionalIndex("Source characters per line in 'summary' (default 80)."),
      images: imagesParameter,
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const access = deps.slot.access('document');
      const cells = await access.handle.listCells();
      access.ensureCurrent();
      const start = given(args.start);
      const count = given(args.count);
      const includeOutputs = given(args.include_outputs) ?? true;
      // Without a count, a default answer: about defaultCellsAnswerBytes, whatever the notebook's size.
      const bounded = count === undefined && defaultCellsAnswerBytes < deps.resultBudgetBytes;
      const budgetBytes = bounded ? defaultCellsAnswerBytes : deps.resultBudgetBytes;
      const shaper = shaperFor(args.images, budgetBytes);
      switch (given(args.format) ?? 'summary') {
        case 'summary':
          return textResult(summarizeCells(cells, { start, count, previewChars: given(args.preview_chars) }));
        case 'rich':
          deps.awareness.saw(
            access.handle.notebookId,
            cells.slice(start ?? 0, count === undefined ? undefined : (start ?? 0) + count),
          );
          return shaper.textResult(
            renderCellsRich(cells, {
              start,
              count,
              includeOutputs,
              shaper,
              budgetBytes,
              ...(bounded ? { budgetReason: defaultCellsAnswerReason } : {}),
            }),
          );
        case 'json': {
          const first = Math.max(0, start ?? 0);
          const end = count === undefined ? cells.length : Math.min(cells.length, first + count);
          // Cells are rendered (their outputs shaped) only as far as the answer goes.
          const budget = budgetBytes * 0.97 - 4096;
          const shown: RenderedCell[] = [];
          let used = 0;
          for (let index = first; index < end; index += 1) {
            const rendered = renderCell(cells[index] as NotebookCell, { index, includeOutputs, shaper });
            used += jsonCellCost(rendered);
            if (shown.length > 0 && used + shaper.imageBytes > budget) break;
            shown.push(rendered);
          }
          const next = first + shown.length;
          const reason = bounded
            ? `Cut ${defaultCellsAnswerReason}`
            : `Cut to fit the ${describeMiB(deps.resultBudgetBytes)} limit of one tool result`;
          deps.awareness.saw(access.handle.notebookId, cells.slice(first, next));
          return shaper.result({
            notebook_id: access.handle.notebookId,
            total_cells: cells.length,
            ...(next < end
              ? {
                  truncated: {
                    shown_cells: shown.length,
                    next_start: next,
                    note: `${reason}: cells ${next}–${end - 1} are not shown. Read them with get_all_cells(format="json", start=${next}), or one at a time with get_cell(cell_id=...).`,
                  },
                }
              : {}),
            cells: shown,
          });
        }
      }
    },
  });

  /** An edit's answer with `and_run=true`: `edited` with `cell`'s execution, or a note for a non-code cell. */
  const runAfterEdit = async (
    access: SessionAccess,
    cell: NotebookCell,
    edited: Record<string, unknown>,
    args: { readonly images?: boolean | null; readonly timeout_secs?: number | null },
    context: ToolCallContext,
  ): Promise<CallToolResult> => {
    if (cell.cellType !== 'code') return jsonResult({ ...edited, note: notRunNote(cell) });
    const shaper = shaperFor(args.images);
    const execution = await runCell(deps, access, cell.id, {
      source: cell.source,
      timeoutSecs: given(args.timeout_secs) ?? defaultExecuteTimeoutSecs,
      idempotencyKey: subKey(context, 'execute'),
      shaper,
      context,
    });
    return shaper.result({ ...edited, ...execution });
  };

  const createCell = defineChildTool({
    name: 'create_cell',
    shows: 'cells',
    session: 'mutation',
    inputRounds: true,
    description:
      'Insert a cell into the active notebook (appended unless index, after_cell_id or before_cell_id is given); with and_run=true a code cell is executed and its outputs returned, shaped as in execute_cell.',
    inputSchema: z.object({
      source: toolParameters.optionalString('Cell source (default empty).'),
      cell_type: cellTypeParameter,
      index: toolParameters.optionalIndex('Position to insert at (default: append).'),
      after_cell_id: toolParameters.optionalString('Insert just after this cell (instead of index).'),
      before_cell_id: toolParameters.optionalString('Insert just before this cell (instead of index).'),
      and_run: toolParameters.optionalBoolean('Execute the new code cell (default false).'),
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for the execution (default ${defaultExecuteTimeoutSecs}).`,
      ),
      images: imagesParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const cellType: CellType = given(args.cell_type) ?? 'code';
      const run = given(args.and_run) ?? false;
      const access = await accessWhenReady(deps, run && cellType === 'code' ? 'runtime' : 'mutation', context);
      const index = await insertionIndex(
        access,
        given(args.index),
        given(args.after_cell_id),
        given(args.before_cell_id),
      );
      const cell = await access.handle.insertCell(
        { source: given(args.source) ?? '', cellType, index },
        { idempotencyKey: subKey(context, 'insert') },
      );
      access.ensureCurrent();
      deps.awareness.saw(access.handle.notebookId, [cell]);
      const created = {
        cell_id: cell.id,
        cell_type: cell.cellType,
        ...(cell.version === undefined ? {} : { version: cell.version }),
      };
      return run ? runAfterEdit(access, cell, created, args, context) : jsonResult(created);
    },
  });

  const setCell = defineChildTool({
    name: 'set_cell',
    shows: 'cells',
    session: 'mutation',
    inputRounds: true,
    description:
      'Replace the source and/or type of a cell of the active notebook; with and_run=true the (code) cell is executed afterwards and its outputs returned, shaped as in execute_cell.',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell id.'),
      source: toolParameters.optionalString('New source.'),
      cell_type: cellTypeParameter,
      expected_version: expectedVersionParameter,
      and_run: toolParameters.optionalBoolean('Execute the cell afterwards (default false).'),
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for the execution (default ${defaultExecuteTimeoutSecs}).`,
      ),
      images: imagesParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const source = given(args.source);
      const cellType = given(args.cell_type);
      const run = given(args.and_run) ?? false;
      if (source === undefined && cellType === undefined && !run) {
        throw new ToolError('Nothing to change: give source, cell_type, or and_run=true.');
      }
      const access = await accessWhenReady(
        deps,
        run && cellType !== 'markdown' && cellType !== 'raw' ? 'runtime' : 'mutation',
        context,
      );
      const notebookId = access.handle.notebookId;
      const expectedVersion = given(args.expected_version);
      let cell: UpdatedCell;
      if (source !== undefined || cellType !== undefined) {
        cell = await access.handle.updateCell(
          args.cell_id,
          { ...(source !== undefined ? { source } : {}), ...(cellType !== undefined ? { cellType } : {}) },
          {
            idempotencyKey: subKey(context, 'update'),
            ...writeVersions(expectedVersion, deps.awareness.seenVersion(notebookId, args.cell_id)),
          },
        );
      } else {
        cell = await access.handle.getCell(args.cell_id);
        if (expectedVersion !== undefined && cell.version !== undefined && cell.version !== expectedVersion) {
          throw new ToolError(staleRunText(cell));
        }
      }
      access.ensureCurrent();
      deps.awareness.saw(notebookId, [cell]);
      const updated = {
        cell_id: cell.id,
        cell_type: cell.cellType,
        updated: source !== undefined || cellType !== undefined,
        ...(cell.version === undefined ? {} : { version: cell.version }),
        ...(cell.replaced === undefined ? {} : { replaced_change: replacedText(cell.replaced) }),
      };
      return run ? runAfterEdit(access, cell, updated, args, context) : jsonResult(updated);
    },
  });

  const deleteCell = defineChildTool({
    name: 'delete_cell',
    session: 'mutation',
    description: 'Delete a cell from the active notebook.',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell id.'),
      expected_version: expectedVersionParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const access = await accessWhenReady(deps, 'mutation', context);
      await access.handle.deleteCell(args.cell_id, {
        idempotencyKey: context.idempotencyKey,
        ...writeVersions(given(args.expected_version), undefined),
      });
      access.ensureCurrent();
      return jsonResult({ deleted: true, cell_id: args.cell_id });
    },
  });

  const moveCell = defineChildTool({
    name: 'move_cell',
    session: 'mutation',
    description: 'Move a cell of the active notebook to just after another cell, or to the start (no after_cell_id).',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell to move.'),
      after_cell_id: toolParameters.optionalString('Put it after this cell (absent or null: at the start).'),
      expected_version: expectedVersionParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, context) => {
      const after = given(args.after_cell_id);
      const access = await accessWhenReady(deps, 'mutation', context);
      await access.handle.moveCell(args.cell_id, after, {
        idempotencyKey: context.idempotencyKey,
        ...writeVersions(given(args.expected_version), undefined),
      });
      access.ensureCurrent();
      return jsonResult({ moved: true, cell_id: args.cell_id, after_cell_id: after ?? null });
    },
  });

  const executeCell = defineChildTool({
    name: 'execute_cell',
    shows: 'cells',
    session: 'runtime',
    task: { support: 'optional', start: (args, context, runs) => runs.cell(args, context) },
    inputRounds: true,
    description: `Execute a code cell of the active notebook and return its outputs: images as image content, HTML as Markdown, long texts cut in the middle and many outputs summarized (the cut markers name the get_results call that pages through the rest). If it runs longer than timeout_secs (default ${defaultExecuteTimeoutSecs}), the outputs so far are returned with status 'running' and an execution_id for get_results. With a progress token, progress reports each output and, every few seconds while the cell is silent, that it still runs (elapsed time, execution id). Cancelling the call stops its execution (interrupts the kernel).`,
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell id.'),
      expected_version: expectedVersionParameter,
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for the execution (default ${defaultExecuteTimeoutSecs}).`,
      ),
      images: imagesParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const access = await accessWhenReady(deps, 'runtime', context);
      const shaper = shaperFor(args.images);
      const execution = await runCell(deps, access, args.cell_id, {
        timeoutSecs: given(args.timeout_secs) ?? defaultExecuteTimeoutSecs,
        idempotencyKey: context.idempotencyKey,
        expectedVersion: given(args.expected_version),
        shaper,
        context,
      });
      return shaper.result(execution);
    },
  });

  const runAllCells = defineChildTool({
    name: 'run_all_cells',
    shows: 'cells',
    session: 'runtime',
    task: { support: 'optional', start: (_args, context, runs) => runs.allCells(context) },
    description: `Execute every code cell of the active notebook in order, stopping at the first error. wait=false queues them and returns their execution ids at once. timeout_secs (default ${defaultRunAllTimeoutSecs}) bounds the whole run; cells not reached are listed.`,
    inputSchema: z.object({
      timeout_secs: toolParameters.optionalPositiveNumber(
        `Seconds to wait for all cells (default ${defaultRunAllTimeoutSecs}).`,
      ),
      wait: toolParameters.optionalBoolean('Wait for the results (default true).'),
      images: imagesParameter,
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, context) => {
      const wait = given(args.wait) ?? true;
      const deadline = deps.clock.now() + (given(args.timeout_secs) ?? defaultRunAllTimeoutSecs) * 1000;
      const access = await accessWhenReady(deps, 'runtime', context);
      const cells = await access.handle.listCells();
      access.ensureCurrent();
      const codeCells = cells.filter((cell) => cell.cellType === 'code');
      const shaper = shaperFor(args.images);
      const executions: Record<string, unknown>[] = [];
      let status = wait ? 'done' : 'queued';
      let index = 0;
      for (; index < codeCells.length; index += 1) {
        const cell = codeCells[index] as NotebookCell;
        const remainingMs = deadline - deps.clock.now();
        if (wait && remainingMs <= 0) {
          status = 'running';
          break;
        }
        const execution = await runCell(deps, access, cell.id, {
          source: cell.source,
          timeoutSecs: wait ? remainingMs / 1000 : 0,
          idempotencyKey: subKey(context, `execute:${cell.id}`),
          shaper,
          context,
        });
        executions.push(execution);
        if (!wait) continue;
        if (execution.status === 'error' || execution.status === 'aborted') {
          status = 'error';
          index += 1;
          break;
        }
        if (execution.status !== 'done') {
          status = 'running';
          index += 1;
          break;
        }
      }
      const notRun = codeCells.slice(index).map((cell) => cell.id);
      return shaper.result({
        notebook_id: access.handle.notebookId,
        status,
        executions,
        ...(notRun.length > 0 ? { not_run: notRun } : {}),
        ...(status === 'running'
          ? { hint: 'Stopped waiting at the timeout; read running cells with get_results(execution_id=...).' }
          : {}),
        ...(status === 'queued' ? { hint: 'Queued; read each result with get_results(execution_id=...).' } : {}),
      });
    },
  });

  const getResults = defineChildTool({
    name: 'get_results',
    shows: 'cells',
    session: 'document',
    description:
      'Outputs and status (queued, running, done, error, aborted) of an execution by its execution_id, shaped like execute_cell; with offset (and length) its outputs as one text, in pages. Works without an active session.',
    inputSchema: z.object({
      execution_id: toolParameters.requiredString(
        'The execution id from execute_cell, create_cell, set_cell or run_all_cells.',
      ),
      images: imagesParameter,
      ...pagingParameters,
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const executionId = args.execution_id.trim();
      const shaper = shaperFor(args.images);
      const offset = given(args.offset);
      const show = (record: ExecutionRecord, extra: Record<string, unknown> = {}) => {
        if (offset === undefined) return shaper.result({ ...executionJson(record, shaper), ...extra });
        const page = pageOfOutputs(record.outputs, offset, given(args.length), deps.resultBudgetBytes);
        return jsonResult({ ...executionJson(record, undefined), ...extra, outputs_page: page });
      };
      const known = deps.executions.get(executionId);
      const notebookId = known?.notebookId ?? deps.slot.active?.handle.notebookId;
      const session = notebookId === undefined ? undefined : deps.slot.find(notebookId);
      if (session && !session.handle.isClosed && offset !== undefined && session.handle.getExecutionPage) {
        // A page is read where the outputs are: only it travels, not every output for each page.
        let read: ExecutionPage | undefined;
        try {
          read = await session.handle.getExecutionPage(
            executionId,
            outputsPageRequest(offset, given(args.length), deps.resultBudgetBytes),
          );
        } catch (error) {
          deps.logger.debug('reading a page of an execution from its notebook failed', { executionId, error });
        }
        if (read !== undefined) {
          const page = pageOfExecution(read);
          return jsonResult({
            ...executionJson(executionRecordOf(read.state, session.handle.notebookId), undefined),
            outputs_page: page,
          });
        }
      }
      if (session && !session.handle.isClosed) {
        try {
          const state = await session.handle.getExecution(executionId);
          const record = executionRecordOf(state, session.handle.notebookId);
          deps.executions.record(record);
          return show(record);
        } catch (error) {
          deps.logger.debug('reading an execution from its notebook failed', { executionId, error });
        }
      }
      if (!known) {
        throw new ToolError(
          `Execution not found: ${executionId}. It may have been evicted and no durable result record was found.`,
        );
      }
      return show(known, { note: 'Last known state: the notebook of this execution is not connected now.' });
    },
  });

  const interruptKernel = defineChildTool({
    name: 'interrupt_kernel',
    session: 'runtime',
    description:
      'Interrupt the kernel of the active notebook to stop the running execution. Says whether it stopped: code that ignores the interrupt still runs (an error says so; restart_kernel stops it).',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      // Nothing runs in a kernel still starting: no wait.
      const access = deps.slot.access('runtime');
      const outcome = await access.handle.interruptKernel();
      if (outcome === 'still_running') {
        throw new ToolError(
          "Not interrupted: the kernel is still running the execution a few seconds after the interrupt (its code ignores it, or is stuck outside Python). restart_kernel stops it; the kernel's variables are lost then.",
        );
      }
      if (outcome === 'nothing_running') return jsonResult({ interrupted: false, note: 'Nothing was running.' });
      return jsonResult({ interrupted: true });
    },
  });

  const restartKernel = defineChildTool({
    name: 'restart_kernel',
    session: 'runtime',
    confirm: { question: restartQuestion },
    description: 'Restart the kernel of the active notebook: all variables are lost; cells and outputs stay.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (_args, context) => {
      const access = await accessWhenReady(deps, 'runtime', context);
      await access.handle.restartKernel();
      const { notebookId, kernelName } = access.handle;
      const lost = deps.kernelHistory.replaced(notebookId, 'restart_kernel', isPythonKernel(kernelName), false);
      return jsonResult({ restarted: true, ...lostStateJson(lost) });
    },
  });

  return [
    getCell,
    getAllCells,
    createCell,
    setCell,
    deleteCell,
    moveCell,
    executeCell,
    runAllCells,
    getResults,
    interruptKernel,
    restartKernel,
  ];
}

/** What one cell adds to a `get_all_cells` JSON result: its pretty JSON (two levels deep) as escaped text. */
function jsonCellCost(cell: RenderedCell): number {
  const text = JSON.stringify(cell, null, 2);
  return escapedBytes(text) + 8 * (text.split('\n').length + 1);
}

/** Where `create_cell` inserts: `index`, or next to a cell named by id; at most one of the three. */
async function insertionIndex(
  access: SessionAccess,
  index: number | undefined,
  after: string | undefined,
  before: string | undefined,
): Promise<number | undefined> {
  const given = [index, after, before].filter((value) => value !== undefined).length;
  if (given > 1) throw new ToolError('Give at most one of index, after_cell_id and before_cell_id.');
  const anchor = after ?? before;
  if (anchor === undefined) return index;
  const cells = await access.handle.listCells();
  const at = cells.findIndex((cell) => cell.id === anchor);
  if (at < 0) throw new ToolError(`Cell not found: ${anchor}`);
  return after !== undefined ? at + 1 : at;
}

function notRunNote(cell: NotebookCell): string {
  return `Only code cells run; this ${cell.cellType} cell was not executed.`;
}

/** `restart_kernel` asks the person first when the kernel ran code: its variables are lost. */
async function restartQuestion(_args: unknown, handle: NotebookHandle): Promise<ConfirmationQuestion | undefined> {
  const cells = await handle.listCells().catch(() => []);
  if (!cells.some((cell) => cell.cellType === 'code' && cell.executionCount !== null)) return undefined;
  return {
    title: 'Restart the kernel',
    message: `The agent wants to restart the kernel of notebook ${handle.notebookId}: every variable and import it holds is lost (cells and outputs stay). Restart it?`,
    unasked:
      'not asked: the kernel was restarted without the person confirming, since this client cannot ask (no elicitation capability)',
  };
}
