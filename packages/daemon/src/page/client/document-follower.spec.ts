import { describe, expect, it } from 'vitest';
import { DocumentFollower } from './document-follower.js';
import type { DocumentEvent } from './live-document.js';
import type { NotebookSnapshot, SnapshotCell } from './notebook-snapshot.js';

const cell = (id: string, source = ''): SnapshotCell => ({
  id,
  cell_type: 'code',
  source,
  outputs: [],
  execution_count: null,
  metadata: {},
  version: `v-${source}`,
});

const snapshotAt = (documentVersion: number, cells: readonly SnapshotCell[]): NotebookSnapshot => ({
  notebookId: 'n',
  path: null,
  documentVersion,
  runtime: { state: 'ready' } as NotebookSnapshot['runtime'],
  conditions: [],
  peers: [],
  cells,
  running: null,
  queued: [],
  outputCapability: '',
});

const updated = (version: number, id: string, source: string): DocumentEvent => ({
  event: 'cell_updated',
  document_version: version,
  cell: cell(id, source),
});

/** Lets the follower's promise callbacks run (a read's answer, its `finally`). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/**
 * A page around a follower: each read waits until the spec answers it (`answerRead`) or fails it;
 * what the page was told to show is logged in order.
 */
function page() {
  const reads: { resolve(snapshot: NotebookSnapshot): void; reject(error: Error): void }[] = [];
  const log: string[] = [];
  const follower = new DocumentFollower({
    snapshot: () => new Promise((resolve, reject) => reads.push({ resolve, reject })),
    showSnapshot: (snapshot) => log.push(`snapshot@${snapshot.documentVersion}`),
    readFailed: (error) => log.push(`failed: ${(error as Error).message}`),
    orderChanged: () => log.push('order'),
    cellChanged: (cellId) => log.push(`cell ${cellId}`),
  });
  const answerRead = async (version: number, cells: readonly SnapshotCell[]) => {
    const read = reads.shift();
    if (!read) throw new Error('no read is on its way');
    read.resolve(snapshotAt(version, cells));
    await settle();
  };
  /** A page that has read the notebook at version 3: cells a and b. */
  const opened = async () => {
    follower.read();
    await answerRead(3, [cell('a', 'one'), cell('b', 'two')]);
    log.length = 0;
  };
  return { follower, reads, log, answerRead, opened };
}

describe(DocumentFollower, () => {
  it('applies each event that makes the next version and tells the page which cell or that the order changed', async () => {
    const p = page();
    await p.opened();
    p.follower.take(updated(4, 'a', 'uno'));
    p.follower.take({ event: 'cell_inserted', document_version: 5, index: 0, cell: cell('c') });
    expect(p.log).toEqual(['cell a', 'order']);
    expect(p.follower.document?.order).toEqual(['c', 'a', 'b']);
    expect(p.follower.document?.cell('a')?.source).toBe('uno');
    expect(p.reads).toHaveLength(0);
  });

  it('holds an event that came ahead and applies it once the missing version arrives, in version order', async () => {
    const p = page();
    await p.opened();
    // Versions 5 and 6 arrive before 4 (the page's own edit was version 4, its answer is late).
    await p.follower.editing(async () => {
      p.follower.take(updated(6, 'b', 'six'));
      p.follower.take(updated(5, 'a', 'five'));
      expect(p.log).toEqual([]);
      expect(p.follower.document?.version).toBe(3);
    });
    p.follower.take(updated(4, 'b', 'four'));
    expect(p.log).toEqual(['cell b', 'cell a', 'cell b']);
    expect(p.follower.document?.version).toBe(6);
    expect(p.follower.document?.cell('b')?.source).toBe('six');
    expect(p.reads).toHaveLength(0);
  });

  it('reads the notebook again for a gap when none of its own edits is on its way', async () => {
    const p = page();
    await p.opened();
    p.follower.take(updated(5, 'a', 'five'));
    expect(p.reads).toHaveLength(1);
    await p.answerRead(5, [cell('a', 'five'), cell('b', 'two')]);
    expect(p.log).toEqual(['snapshot@5']);
    expect(p.follower.document?.version).toBe(5);
  });

  it('waits for its own edit’s answer to fill a gap, and reads again when that edit failed', async () => {
    const p = page();
    await p.opened();
    let failEdit: (error: Error) => void = () => undefined;
    const edit = p.follower.editing(
      () =>
        new Promise<void>((_resolve, reject) => {
          failEdit = reject;
        }),
    );
    p.follower.take(updated(5, 'a', 'five'));
    expect(p.reads).toHaveLength(0);
    failEdit(new Error('refused'));
    await expect(edit).rejects.toThrow('refused');
    // The page calls catchUp after a refused request: nothing fills the gap now.
    p.follower.catchUp();
    expect(p.reads).toHaveLength(1);
  });

  it('reads again when an event does not fit its copy (a cell it names is not there)', async () => {
    const p = page();
    await p.opened();
    p.follower.take({ event: 'cell_deleted', document_version: 4, cell_id: 'gone' });
    expect(p.reads).toHaveLength(1);
    expect(p.follower.document?.version).toBe(3);
    expect(p.log).toEqual([]);
  });

  it('drops events older than its copy', async () => {
    const p = page();
    await p.opened();
    p.follower.take(updated(3, 'a', 'old'));
    p.follower.take(updated(2, 'a', 'older'));
    expect(p.follower.document?.cell('a')?.source).toBe('one');
    expect(p.log).toEqual([]);
    expect(p.reads).toHaveLength(0);
  });

  it('keeps the events that come during a read and applies those beyond the version it read', async () => {
    const p = page();
    p.follower.read();
    p.follower.take(updated(2, 'a', 'two'));
    p.follower.take(updated(4, 'a', 'four'));
    p.follower.take(updated(3, 'a', 'three'));
    await p.answerRead(3, [cell('a', 'three')]);
    expect(p.log).toEqual(['snapshot@3', 'cell a']);
    expect(p.follower.document?.cell('a')?.source).toBe('four');
    expect(p.reads).toHaveLength(0);
  });

  it('reads again when its copy is older than the version its stream joined at, and not when it is as new', async () => {
    const p = page();
    await p.opened();
    p.follower.joined(3);
    expect(p.reads).toHaveLength(0);
    p.follower.joined(7);
    expect(p.reads).toHaveLength(1);
    await p.answerRead(7, [cell('a')]);
    expect(p.reads).toHaveLength(0);
  });

  it('coalesces reads asked for during a read into one more read after it', async () => {
    const p = page();
    p.follower.read();
    p.follower.read();
    p.follower.read();
    expect(p.reads).toHaveLength(1);
    await p.answerRead(1, [cell('a')]);
    expect(p.reads).toHaveLength(1);
    await p.answerRead(2, [cell('a', 'x')]);
    expect(p.reads).toHaveLength(0);
    expect(p.log).toEqual(['snapshot@1', 'snapshot@2']);
  });

  it('says a failed read and keeps the copy it had', async () => {
    const p = page();
    await p.opened();
    p.follower.read();
    p.reads.shift()?.reject(new Error('HTTP 503'));
    await settle();
    expect(p.log).toEqual(['failed: HTTP 503']);
    expect(p.follower.document?.version).toBe(3);
    p.follower.take(updated(4, 'a', 'four'));
    expect(p.log).toEqual(['failed: HTTP 503', 'cell a']);
  });
});
