import type { CellActivity, NotebookCell, NotebookHandle } from '../ports/notebook-handle.js';

/** How many activities of other peers one answer's note names before it points to `get_changes`. */
export const changeNoteLimit = 8;

/** Where this session's reading of one notebook stands. */
interface NotebookReading {
  /** The version of each cell as this session last read or wrote it. */
  readonly seen: Map<string, string>;
  /** The change-log cursor of the last note, and the document version it was taken at. */
  cursor?: string;
  documentVersion?: number;
}

/**
 * What this session knows of the other peers' work on its notebooks: the version of each cell it
 * last read or wrote (an update then says when it replaced someone else's later change), and where
 * it last looked in the notebook's change log (each answer then says, in a few lines, what the
 * others did since the previous call). Per notebook id, for the life of this child: a restarted
 * child starts afresh (its first answers name no earlier changes; `get_changes` still lists them).
 */
export class PeerAwareness {
  readonly #readings = new Map<string, NotebookReading>();

  /**
   * `handed`: where the previous child's notes stood, `<notebook id> <cursor>`: this child's first
   * answer on that notebook names what others did since, as the previous child's next one would have.
   */
  public constructor(handed?: string) {
    const [notebookId, cursor] = handed?.split(' ') ?? [];
    if (notebookId && cursor) this.reading(notebookId).cursor = cursor;
  }

  /** Where the notes on `notebookId` stand (the cursor of the last change-log read), if they started. */
  public cursorOf(notebookId: string): string | undefined {
    return this.#readings.get(notebookId)?.cursor;
  }

  /** The agent was shown (or wrote) these cells as they are now. */
  public saw(notebookId: string, cells: readonly NotebookCell[]): void {
    const { seen } = this.reading(notebookId);
    for (const cell of cells) if (cell.version !== undefined) seen.set(cell.id, cell.version);
  }

  /** The version of the cell as the agent last saw it, if it did. */
  public seenVersion(notebookId: string, cellId: string): string | undefined {
    return this.#readings.get(notebookId)?.seen.get(cellId);
  }

  /**
   * The lines telling what peers other than `ownLabel` did to the notebook of `handle` since the
   * previous call (none on the first; no request when the notebook did not change). Never throws:
   * a change log that cannot be read now is read at the next call.
   */
  public async changeNote(handle: NotebookHandle | undefined, ownLabel: string): Promise<string[]> {
    if (!handle?.getChanges || handle.isClosed) return [];
    const reading = this.reading(handle.notebookId);
    if (reading.cursor !== undefined && handle.documentVersion === reading.documentVersion) return [];
    const documentVersion = handle.documentVersion;
    const since = reading.cursor;
    let page: Awaited<ReturnType<NonNullable<NotebookHandle['getChanges']>>>;
    try {
      page = await handle.getChanges(since);
    } catch {
      return [];
    }
    reading.cursor = page.cursor;
    reading.documentVersion = documentVersion;
    if (since === undefined) return [];
    const self = agentOf(ownLabel);
    const others = page.activities.filter((activity) => agentOf(activity.by) !== self);
    const lines = describeActivities(others, since);
    if (!page.complete && page.note) lines.push(page.note);
    return lines;
  }

  private reading(notebookId: string): NotebookReading {
    let reading = this.#readings.get(notebookId);
    if (!reading) {
      reading = { seen: new Map() };
      this.#readings.set(notebookId, reading);
    }
    return reading;
  }
}

/**
 * A few lines naming who did what since the previous call, one line per peer, at most
 * {@link changeNoteLimit} activities named; the rest are counted and `get_changes` named.
 */
export function describeActivities(activities: readonly CellActivity[], since: string): string[] {
  if (activities.length === 0) return [];
  const byPeer = new Map<string, string[]>();
  for (const activity of activities.slice(0, changeNoteLimit)) {
    const done = byPeer.get(activity.by) ?? [];
    done.push(describeActivity(activity));
    byPeer.set(activity.by, done);
  }
  const lines = [...byPeer].map(([by, done]) => `Since your last call, ${by} ${done.join(', ')}.`);
  const more = activities.length - changeNoteLimit;
  if (more > 0)
    lines.push(`… and ${more} more change${more === 1 ? '' : 's'}: get_changes(since="${since}") lists them all.`);
  return lines;
}

function describeActivity(activity: CellActivity): string {
  const cell = `cell ${activity.cellId}`;
  const undo = activity.undo ? ' (an undo)' : '';
  switch (activity.kind) {
    case 'inserted':
      return `inserted ${cell}${activity.index === undefined ? '' : ` at index ${activity.index}`}${undo}`;
    case 'moved':
      return `moved ${cell}${activity.index === undefined ? '' : ` to index ${activity.index}`}${undo}`;
    case 'ran':
      return `ran ${cell}${activity.status === undefined ? '' : ` (${activity.status})`}`;
    case 'cleared':
      return `cleared the outputs of ${cell}${undo}`;
    default:
      return `${activity.kind} ${cell}${undo}`;
  }
}

/** The `agent:<slug>:<session>` part of a peer label (what stays when the client renames itself), else the label. */
function agentOf(label: string): string {
  const last = label.slice(label.lastIndexOf(' ') + 1);
  return last.startsWith('agent:') ? last : label;
}
