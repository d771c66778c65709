import { describe, expect, it } from 'vitest';
import type { CellActivity, CellActivityPage, NotebookHandle } from '../../ports/notebook-handle.js';
import { changeNoteLimit, describeActivities, PeerAwareness, quietAnswersBeforeRead } from './peer-awareness.js';

const me = 'Claude agent:claude:s1';
const person = 'human:ada';

/**
 * The parts of a handle `changeNote` reads, over a change log kept here: a cursor is `c.<document
 * version>`; `ownEdit` moves the version as an answer of ours does (the count of others' changes
 * stays), `peerEdit` as another peer's broadcast does (both move). Counts the change-log reads.
 */
class ChangeLogHandle {
  public readonly notebookId = 'nb-1';
  public isClosed = false;
  public documentVersion: number | undefined = 0;
  public othersChangeCount: number | undefined = 0;
  public reads: (string | undefined)[] = [];
  public failNext = false;
  readonly #log: CellActivity[] = [];

  public getChanges = async (since?: string): Promise<CellActivityPage> => {
    this.reads.push(since);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('connection lost');
    }
    const after = since === undefined ? 0 : Number(since.slice(2));
    const version = this.documentVersion ?? this.#log.length;
    return {
      cursor: `c.${version}`,
      activities: this.#log.filter((activity) => activity.documentVersion > after),
      complete: true,
    };
  };

  public ownEdit(cellId = 'a'): void {
    this.log(me, cellId);
  }

  public peerEdit(cellId = 'b', by = person): void {
    this.log(by, cellId);
    if (this.othersChangeCount !== undefined) this.othersChangeCount += 1;
  }

  public get asHandle(): NotebookHandle {
    return this as unknown as NotebookHandle;
  }

  private log(by: string, cellId: string): void {
    const documentVersion = (this.documentVersion ?? this.#log.length) + 1;
    if (this.documentVersion !== undefined) this.documentVersion = documentVersion;
    this.#log.push({ documentVersion, at: '', by, kind: 'edited', cellId });
  }
}

describe('PeerAwareness.changeNote', () => {
  it('reads the change log on the first answer only to set its cursor (nothing is named)', async () => {
    const handle = new ChangeLogHandle();
    handle.peerEdit();
    const awareness = new PeerAwareness();
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toEqual([undefined]);
    expect(awareness.cursorOf('nb-1')).toBe('c.1');
  });

  it('asks nothing for a lone agent: its own changes move the version, not the count of others', async () => {
    const handle = new ChangeLogHandle();
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    for (let call = 0; call < 10; call += 1) {
      handle.ownEdit();
      expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    }
    expect(handle.reads).toEqual([undefined]);
  });

  it("names another peer's change with the next answer, once", async () => {
    const handle = new ChangeLogHandle();
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    handle.ownEdit();
    handle.peerEdit('b');
    handle.ownEdit();
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual(['Since your last call, human:ada edited cell b.']);
    expect(handle.reads).toEqual([undefined, 'c.0']);
    handle.ownEdit();
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toHaveLength(2);
  });

  it('names nothing of this agent under another client name (same agent:<slug>:<session>)', async () => {
    const handle = new ChangeLogHandle();
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    handle.peerEdit('b', 'Renamed client agent:claude:s1');
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toHaveLength(2);
  });

  it('reads again at the next answer when the change log could not be read (the change is not lost)', async () => {
    const handle = new ChangeLogHandle();
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    handle.peerEdit('b');
    handle.failNext = true;
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual(['Since your last call, human:ada edited cell b.']);
    expect(handle.reads).toEqual([undefined, 'c.0', 'c.0']);
  });

  it('reads once every quietAnswersBeforeRead answers of a lone agent, so the handed cursor stays near now', async () => {
    const handle = new ChangeLogHandle();
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    for (let call = 0; call < quietAnswersBeforeRead; call += 1) {
      handle.ownEdit();
      await awareness.changeNote(handle.asHandle, me);
    }
    expect(handle.reads).toEqual([undefined]);
    handle.ownEdit();
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toEqual([undefined, 'c.0']);
    expect(awareness.cursorOf('nb-1')).toBe(`c.${quietAnswersBeforeRead + 1}`);
  });

  it('without a count of others: reads when the document version moved, not when it stayed', async () => {
    const handle = new ChangeLogHandle();
    handle.othersChangeCount = undefined;
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toHaveLength(1);
    handle.ownEdit();
    await awareness.changeNote(handle.asHandle, me);
    expect(handle.reads).toHaveLength(2);
  });

  it('without a document version either: reads at every answer', async () => {
    const handle = new ChangeLogHandle();
    handle.othersChangeCount = undefined;
    handle.documentVersion = undefined;
    const awareness = new PeerAwareness();
    await awareness.changeNote(handle.asHandle, me);
    await awareness.changeNote(handle.asHandle, me);
    handle.peerEdit('b');
    expect(await awareness.changeNote(handle.asHandle, me)).toEqual(['Since your last call, human:ada edited cell b.']);
    expect(handle.reads).toEqual([undefined, 'c.0', 'c.0']);
  });

  it('asks nothing of a closed handle, a handle without a change log, or no handle', async () => {
    const awareness = new PeerAwareness();
    const closed = new ChangeLogHandle();
    closed.isClosed = true;
    expect(await awareness.changeNote(closed.asHandle, me)).toEqual([]);
    expect(closed.reads).toEqual([]);
    const noLog = { notebookId: 'nb-2', isClosed: false } as unknown as NotebookHandle;
    expect(await awareness.changeNote(noLog, me)).toEqual([]);
    expect(await awareness.changeNote(undefined, me)).toEqual([]);
  });
});

describe('PeerAwareness cursor handoff', () => {
  it("a restarted child's first answer names what others did since the handed cursor", async () => {
    const handle = new ChangeLogHandle();
    const before = new PeerAwareness();
    await before.changeNote(handle.asHandle, me);
    handle.ownEdit();
    handle.peerEdit('b');
    const handed = `nb-1 ${before.cursorOf('nb-1')}`;
    const after = new PeerAwareness(handed);
    expect(after.cursorOf('nb-1')).toBe('c.0');
    expect(await after.changeNote(handle.asHandle, me)).toEqual(['Since your last call, human:ada edited cell b.']);
    expect(handle.reads).toEqual([undefined, 'c.0']);
  });

  it('reads at the first answer after a handoff even when nothing of others is counted yet', async () => {
    const handle = new ChangeLogHandle();
    const after = new PeerAwareness('nb-1 c.0');
    expect(await after.changeNote(handle.asHandle, me)).toEqual([]);
    expect(handle.reads).toEqual(['c.0']);
  });

  it('ignores a handed cursor without a notebook id or a cursor', () => {
    expect(new PeerAwareness('nb-1').cursorOf('nb-1')).toBeUndefined();
    expect(new PeerAwareness('').cursorOf('')).toBeUndefined();
  });
});

describe('PeerAwareness seen versions', () => {
  it('remembers the version of each cell as last seen, per notebook', () => {
    const awareness = new PeerAwareness();
    awareness.saw('nb-1', [
      { id: 'a', cellType: 'code', source: '', outputs: [], executionCount: null, metadata: {}, version: 'v1' },
      { id: 'b', cellType: 'code', source: '', outputs: [], executionCount: null, metadata: {} },
    ]);
    expect(awareness.seenVersion('nb-1', 'a')).toBe('v1');
    expect(awareness.seenVersion('nb-1', 'b')).toBeUndefined();
    expect(awareness.seenVersion('nb-2', 'a')).toBeUndefined();
  });
});

describe('describeActivities', () => {
  it('one line per peer; past the limit, counts the rest and names get_changes', () => {
    const activities = Array.from(
      { length: changeNoteLimit + 2 },
      (_, index): CellActivity => ({
        documentVersion: index + 1,
        at: '',
        by: person,
        kind: 'ran',
        cellId: `c${index}`,
      }),
    );
    const lines = describeActivities(activities, 'c.0');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^Since your last call, human:ada ran cell c0, ran cell c1/);
    expect(lines[1]).toBe('… and 2 more changes: get_changes(since="c.0") lists them all.');
    expect(describeActivities([], 'c.0')).toEqual([]);
  });
});
