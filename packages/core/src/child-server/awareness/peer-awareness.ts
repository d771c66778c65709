import type { CellActivity, NotebookCell, NotebookHandle } from '../../ports/notebook-handle.js';

/** How many activities of other peers one answer's note names before it points to `get_changes`. */
export const changeNoteLimit = 8;

/**
 * How many answers in a row may leave the change log unread while only this session changed the
 * notebook: then it is read once, so the cursor a restarted child is handed stays close to now
 * (its first answer reads from there; this session's own changes after it are read and dropped).
 */
export const quietAnswersBeforeRead = 50;

/** Where this session's reading of one notebook stands. */
interface NotebookReading {
  /** The version of each cell as this session last read or wrote it. */
  readonly seen: Map<string, string>;
  /** The change-log cursor of the last note, and the document version it was taken at. */
  cursor?: string;
  documentVersion?: number;
  /** The handle's count of others' changes when the change log was last read. */
  othersChangeCount?: number;
  /** Answers since the change log was last read. */
  quietAnswers: number;
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
   * previous call (none on the first). Never throws: a change log that cannot be read now is read
   * at the next call.
   *
   * Asks the change log only when another peer may have changed the notebook since it was last
   * read: on the first call (also after a handed cursor), when the handle's
   * {@link NotebookHandle.othersChangeCount} grew (a handle without it: when `documentVersion`
   * moved, or on every call when it has none either), and once every
   * {@link quietAnswersBeforeRead} answers when only this session changed it. A lone agent's
   * answers therefore cost no request; another peer's change the handle learned of before an
   * answer is named in that answer, once (the cursor moves past it).
   */
  public async changeNote(handle: NotebookHandle | undefined, ownLabel: string): Promise<string[]> {
    if (!handle?.getChanges || handle.isClosed) return [];
    const reading = this.reading(handle.notebookId);
    const { documentVersion, othersChangeCount } = handle;
    if (reading.cursor !== undefined && !mayHaveOthersChanges(reading, documentVersion, othersChangeCount)) {
      if (documentVersion !== reading.documentVersion) reading.quietAnswers += 1;
      return [];
    }
    const since = reading.cursor;
    let page: Awaited<ReturnType<NonNullable<NotebookHandle['getChanges']>>>;
    try {
      page = await handle.getChanges(since);
    } catch {
      return [];
    }
    // What the handle knew before asking: a change it learns of while the request is out is
    // asked for at the next call (named then, unless this page already had it).
    reading.cursor = page.cursor;
    reading.documentVersion = documentVersion;
    reading.othersChangeCount = othersChangeCount;
    reading.quietAnswers = 0;
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
      reading = { seen: new Map(), quietAnswers: 0 };
      this.#readings.set(notebookId, reading);
    }
    return reading;
  }
}

/**
 * Whether the change log may hold another peer's change after the reading's cursor: see
 * {@link PeerAwareness.changeNote}.
 */
function mayHaveOthersChanges(
  reading: NotebookReading,
  documentVersion: number | undefined,
  othersChangeCount: number | undefined,
): boolean {
  if (documentVersion === undefined) return true;
  if (othersChangeCount === undefined) return documentVersion !== reading.documentVersion;
  if (othersChangeCount !== reading.othersChangeCount) return true;
  return documentVersion !== reading.documentVersion && reading.quietAnswers >= quietAnswersBeforeRead;
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
