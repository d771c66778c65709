import { randomBytes } from 'node:crypto';
import type { WireCellChange, WireNotebookAnswer } from '@nteract-mcp/runtimed-protocol';

/** How many changes a room keeps for `get_changes`. */
export const changeLogCapacity = 500;

/**
 * What the room's peers did to its cells, the last {@link changeLogCapacity} changes, oldest first,
 * for `get_changes`. A cursor is `<life>.<document version>`: the life is new with every room
 * object (a daemon restart, a room reopened), so a cursor from an earlier life is known to be from
 * before what this log has.
 */
export class RoomChangeLog {
  readonly #life = randomBytes(3).toString('hex');
  readonly #changes: WireCellChange[] = [];
  /** The document version before the oldest change kept (changes after it are all here). */
  #keptAfter: number;

  /** `documentVersion`: the document's version when the log starts (its changes come after). */
  public constructor(documentVersion: number) {
    this.#keptAfter = documentVersion;
  }

  public record(change: WireCellChange): void {
    this.#changes.push(change);
    if (this.#changes.length > changeLogCapacity) {
      const dropped = this.#changes.shift() as WireCellChange;
      this.#keptAfter = dropped.document_version;
    }
  }

  /** The cursor for "now", at `documentVersion`. */
  public cursor(documentVersion: number): string {
    return `${this.#life}.${documentVersion}`;
  }

  /** The changes after `since` (absent: all kept), and whether that is all of them. */
  public since(since: string | undefined, documentVersion: number): WireNotebookAnswer<'get_changes'> {
    const cursor = this.cursor(documentVersion);
    if (since === undefined) {
      return { cursor, changes: [...this.#changes], complete: this.#keptAfter === 0 };
    }
    const [life, version] = since.split('.');
    const after = Number(version);
    if (life !== this.#life || !Number.isInteger(after) || after < 0) {
      return {
        cursor,
        changes: [...this.#changes],
        complete: false,
        note:
          life === this.#life
            ? `'${since}' is not a cursor of this notebook: here is every change kept.`
            : 'The cursor is from before the daemon restarted or the notebook was reopened or reloaded from its file: the changes made before are not known; here is every change since.',
      };
    }
    const changes = this.#changes.filter((change) => change.document_version > after);
    const complete = after >= this.#keptAfter;
    return {
      cursor,
      changes,
      complete,
      ...(complete ? {} : { note: `Only the last ${changeLogCapacity} changes are kept: earlier ones are not known.` }),
    };
  }
}
