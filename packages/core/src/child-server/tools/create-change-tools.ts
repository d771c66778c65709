import * as z from 'zod';
import { idempotencyHonoredMeta } from '../../handoff/handoff-contract.js';
import type { CellActivity } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { defineChildTool, jsonResult, type RegisteredChildTool } from './child-tool-registry.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';

/** The most edits one `undo` call reverts. */
export const maxUndoCount = 50;

/**
 * The tools for working beside other peers of a notebook: what they did since a cursor
 * (`get_changes`, the full list behind the short note every answer carries) and `undo` of this
 * session's own last edits. On the active session, like the notebook tools; a backend without a
 * change log or undo says so.
 */
export function createChangeTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const getChanges = defineChildTool({
    name: 'get_changes',
    session: 'document',
    description:
      'What the peers of the active notebook (people in the live page, other agents, you) did to its cells since a cursor, oldest first: who inserted, edited, deleted, moved, cleared or ran which cell. Without since: every change the notebook still keeps. Give the returned cursor as since next time.',
    inputSchema: z.object({
      since: toolParameters.optionalString('A cursor from an earlier get_changes answer or change note.'),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const access = deps.slot.access('document');
      const { handle } = access;
      if (!handle.getChanges) throw new ToolError('This notebook keeps no change log (its backend has none).');
      const page = await handle.getChanges(given(args.since));
      access.ensureCurrent();
      return jsonResult({
        cursor: page.cursor,
        complete: page.complete,
        ...(page.note === undefined ? {} : { note: page.note }),
        changes: page.activities.map(activityJson),
      });
    },
  });

  const undo = defineChildTool({
    name: 'undo',
    session: 'mutation',
    description:
      'Undo your own last edits of the active notebook (count of them, default 1, newest first): a cell you inserted is deleted, an edit or move is reverted, a cell you deleted comes back. Refused, changing nothing, when someone else changed one of those cells since.',
    inputSchema: z.object({
      count: toolParameters.optionalIndex(`How many of your edits to revert (1 to ${maxUndoCount}, default 1).`),
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const count = given(args.count) ?? 1;
      if (count < 1 || count > maxUndoCount) throw new ToolError(`count must be 1 to ${maxUndoCount}.`);
      const access = await accessWhenReady(deps, 'mutation', context);
      const { handle } = access;
      if (!handle.undo) throw new ToolError('This notebook has no undo (its backend keeps no edit history).');
      const undone = await handle.undo(count, { idempotencyKey: context.idempotencyKey });
      access.ensureCurrent();
      return jsonResult({ undone: undone.map(activityJson) });
    },
  });

  return [getChanges, undo];
}

/** An activity as the tools show it (snake case, as the rest of the answers). */
function activityJson(activity: CellActivity): Record<string, unknown> {
  return {
    at: activity.at,
    by: activity.by,
    kind: activity.kind,
    cell_id: activity.cellId,
    ...(activity.index === undefined ? {} : { index: activity.index }),
    ...(activity.status === undefined ? {} : { status: activity.status }),
    ...(activity.undo ? { undo: true } : {}),
  };
}
