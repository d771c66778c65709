import {
  accessWhenReady,
  type ChildServerDependencies,
  type ConfirmationQuestion,
  defineChildTool,
  jsonResult,
  type NotebookHandle,
  type RegisteredChildTool,
} from '@nteract-mcp/core';
import * as z from 'zod';

/** How long the tool waits for each cell when it runs as a plain call (not a task). */
const cellTimeoutMs = 120_000;

/**
 * `rerun_all_cells`: every code cell of the active notebook again, from the top, stopping at the
 * first that does not end ok. It does none of the call's steps itself; it declares them:
 * - `session: 'runtime'`: called while a lost session is being brought back, it waits for it (and
 *   a call whose session was lost under it runs again on the session brought back);
 * - `task`: a client that asks gets an MCP task, the daemon's runs of the cells, one after the other;
 * - `confirm`: when cells already ran, the person is asked first (their outputs are replaced);
 *   a client that cannot ask gets the run, with a note that nobody was asked.
 */
export function createRerunAllCellsTool(services: ChildServerDependencies): RegisteredChildTool {
  return defineChildTool({
    name: 'rerun_all_cells',
    description:
      "Run every code cell of the active notebook again from the top, replacing their outputs; stops at the first cell that fails. Asks the person first when cells already ran. Answers each cell's status and execution count.",
    inputSchema: z.object({}),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    session: 'runtime',
    task: { support: 'optional', start: (_args, context, runs) => runs.allCells(context) },
    confirm: { question: rerunQuestion },
    handler: async (_args, context) => {
      // A kernel still starting (a session just brought back) is waited for, as core's tools do.
      const { handle } = await accessWhenReady(services, 'runtime', context);
      const cells = (await handle.listCells()).filter((cell) => cell.cellType === 'code');
      const ran: Record<string, unknown>[] = [];
      for (const cell of cells) {
        const result = await handle.executeCell(cell.id, {
          timeoutMs: cellTimeoutMs,
          ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: `${context.idempotencyKey}:${cell.id}` }),
        });
        ran.push({ cell_id: cell.id, status: result.status, execution_count: result.executionCount });
        if (result.status !== 'ok') break;
      }
      return jsonResult({ ran });
    },
  });
}

/** Asked when a code cell already ran: its outputs are replaced. */
async function rerunQuestion(_args: unknown, handle: NotebookHandle): Promise<ConfirmationQuestion | undefined> {
  const cells = await handle.listCells().catch(() => []);
  const ran = cells.filter((cell) => cell.cellType === 'code' && cell.executionCount !== null).length;
  if (ran === 0) return undefined;
  return {
    title: 'Run every cell again',
    message: `The agent wants to run every code cell of notebook ${handle.notebookId} again: the outputs of the ${ran} that already ran are replaced. Run them again?`,
    unasked:
      'not asked: the cells were run again without the person confirming, since this client cannot ask (no elicitation capability)',
  };
}
