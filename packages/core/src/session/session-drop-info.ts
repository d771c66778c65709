import {
  describeNotebookTarget,
  identityOfTarget,
  isHostedUrlTarget,
  type NotebookTarget,
} from '../notebook-target/notebook-target.js';

/**
 * Why the last session went away.
 * - `switched`: another notebook became active; the old one may still be parked.
 * - `disconnected`: the daemon connection was lost or recovery failed.
 * - `closed`: the agent disconnected it (`disconnect_notebook`), which also cancels automatic rejoin.
 * - `evicted`: rejoin got a definitive refusal (unknown notebook id, missing saved file); its
 *   `detail` is the refusal's reason. It does not mean every kernel keep-alive timeout deletes a room.
 */
export type SessionDropReason = 'switched' | 'disconnected' | 'closed' | 'evicted';

/** Best-effort recovery context kept after a session goes away; not another session. */
export interface SessionDropInfo {
  readonly reason: SessionDropReason;
  readonly notebookId: string | undefined;
  readonly notebookPath: string | undefined;
  readonly rejoinTarget: NotebookTarget | undefined;
  readonly at: number;
  /** Why the automatic rejoin gave up, in the agent's words (set when a bounded recovery ran out of attempts). */
  readonly detail?: string;
}

/**
 * The texts agents know from the original server; `evicted` without the original's "(idle
 * timeout)", which was not the cause here (a definitive refusal: the notebook is gone, e.g. an
 * unsaved one after a daemon restart). The refusal's own words follow it as the drop's detail.
 */
const reasonTexts: Readonly<Record<SessionDropReason, string>> = {
  evicted: 'notebook was evicted',
  switched: 'switched to a different notebook',
  disconnected: 'daemon connection lost',
  closed: 'you disconnected it with disconnect_notebook',
};

/** The error text for a notebook tool called with no active session. */
export function noSessionMessage(drop: SessionDropInfo | undefined): string {
  if (!drop) return 'No active notebook session. Call connect_notebook or create_notebook first.';
  // A hosted notebook's id names no daemon room: it reconnects by its URL only.
  const byOwnArgument = drop.rejoinTarget !== undefined && isHostedUrlTarget(drop.rejoinTarget);
  const why =
    byOwnArgument && drop.reason === 'disconnected' ? 'connection to its server lost' : reasonTexts[drop.reason];
  if (drop.detail !== undefined && drop.reason === 'evicted') {
    // Gone for good: reconnecting to it cannot work, so no reconnect call is offered.
    const cause = drop.detail.trim().replace(/\.$/, '');
    return `No active notebook session (${why}: ${cause}). Start again with create_notebook, or connect_notebook to a saved file.`;
  }
  if (drop.detail !== undefined) return `No active notebook session (${why}). ${drop.detail}`;
  let how: string;
  if (byOwnArgument && drop.rejoinTarget !== undefined) how = reconnectCall(drop.rejoinTarget);
  else if (drop.notebookId !== undefined) how = `connect_notebook(notebook_id="${drop.notebookId}")`;
  else if (drop.rejoinTarget !== undefined) how = reconnectCall(drop.rejoinTarget);
  else how = 'connect_notebook or create_notebook';
  const file = drop.notebookPath !== undefined ? ` — file: ${drop.notebookPath}` : '';
  return `No active notebook session (${why}). Reconnect with: ${how}${file}`;
}

/**
 * Why the notebook `target` (handed to a restarted child) will not be rejoined, as the agent
 * would be told: the no-session text when no notebook is active; when the agent made another
 * notebook active meanwhile, that it switched, and how to go back.
 */
export function notRejoinedMessage(
  target: NotebookTarget,
  drop: SessionDropInfo | undefined,
  activeNotebookId: string | undefined,
): string {
  if (activeNotebookId === undefined) return noSessionMessage(drop);
  return `Not rejoined (${reasonTexts.switched}: ${activeNotebookId} is active). Reconnect with: ${reconnectCall(target)}`;
}

/** `connect_notebook(<the argument of the target's kind>="<its identity>")`. */
function reconnectCall(target: NotebookTarget): string {
  return `connect_notebook(${identityOfTarget(target).argument}="${describeNotebookTarget(target)}")`;
}
