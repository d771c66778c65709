import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotebookDocument } from '../document/notebook-document.js';
import { BlobText } from './blob-text.js';
import { OutputBlobStore } from './output-blob-store.js';
import { type JournalContents, type JournalSettings, RoomJournal, sha256 } from './room-journal.js';

const id = '0b0e7c4e-1d7a-4d35-9c55-3b1f7f1b2a10';
let dir: string;
let settings: JournalSettings;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-'));
  settings = { dir: join(dir, 'journal'), fsync: false, maxBytes: 4096 };
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function baseOf(path: string, text: string) {
  writeFileSync(path, text);
  const stat = statSync(path);
  return { path, size: stat.size, mtime_ms: stat.mtimeMs, sha256: sha256(text) };
}

function read(): JournalContents {
  const contents = RoomJournal.read(settings.dir, id);
  if (typeof contents !== 'object') throw new Error(`no journal: ${String(contents)}`);
  return contents;
}

/** A document with two cells, its text, and a journal begun from it. */
function start() {
  const path = join(dir, 'a.ipynb');
  const document = NotebookDocument.empty();
  document.insert({ source: 'one', cellType: 'code' });
  document.insert({ source: 'two', cellType: 'markdown' });
  const text = document.toIpynb();
  const journal = RoomJournal.begin(settings, id, baseOf(path, text), []);
  return { path, text, document, journal };
}

describe('RoomJournal', () => {
  it('creates its file 0600 in a 0700 directory', () => {
    start().journal.close();
    expect(statSync(settings.dir).mode & 0o777).toBe(0o700);
    expect(statSync(RoomJournal.fileOf(settings.dir, id)).mode & 0o777).toBe(0o600);
  });

  it('replays appended edits onto the base, giving the document the edits made', () => {
    const { path, text, document, journal } = start();
    const [first, second] = document.cells();
    const inserted = document.insert({ source: 'three', cellType: 'code', index: 1 });
    journal.append({ op: 'insert', index: inserted.index, cell: inserted.cell }, undefined);
    const updated = document.update(first?.id ?? '', { source: 'ONE' });
    journal.append({ op: 'set', cell: updated }, { key: 'k-1', operation: 'update_cell', result: { cell: updated } });
    document.delete(second?.id ?? '');
    journal.append({ op: 'delete', cell_id: second?.id ?? '' }, undefined);
    const index = document.move(first?.id ?? '', inserted.cell.id);
    journal.append({ op: 'move', cell_id: first?.id ?? '', index }, undefined);
    journal.close();

    const plan = RoomJournal.planReplay(read(), path, sha256(text));
    expect(plan?.changes).toHaveLength(4);
    expect(plan?.ledger.map((entry) => entry.key)).toEqual(['k-1']);
    const replayed = NotebookDocument.fromIpynb(text, path);
    for (const change of plan?.changes ?? []) replayed.apply(change);
    expect(replayed.cells()).toEqual(document.cells());
  });

  it('refuses a file that is neither its base nor a save it marked (changed by someone else)', () => {
    const { path, journal } = start();
    journal.append({ op: 'delete', cell_id: 'x' }, undefined);
    journal.close();
    expect(RoomJournal.planReplay(read(), path, sha256('something else'))).toBeUndefined();
    expect(RoomJournal.planReplay(read(), join(dir, 'other.ipynb'), sha256('x'))).toBeUndefined();
    const aside = RoomJournal.setAside(settings.dir, id, 42);
    expect(readdirSync(settings.dir)).toEqual([`${id}.42.unmatched.jsonl`]);
    expect(aside).toBe(join(settings.dir, `${id}.42.unmatched.jsonl`));
  });

  it('after a save that landed without its rotation, replays only what the save missed', () => {
    const { path, document, journal } = start();
    const a = document.insert({ source: 'a', cellType: 'code' });
    journal.append({ op: 'insert', index: a.index, cell: a.cell }, undefined);
    const saved = document.toIpynb();
    journal.markSaving(sha256(saved));
    const b = document.insert({ source: 'b', cellType: 'code' });
    journal.append({ op: 'insert', index: b.index, cell: b.cell }, undefined);
    journal.close();
    writeFileSync(path, saved); // the save's rename happened; the crash came before the rotation

    const plan = RoomJournal.planReplay(read(), path, sha256(saved));
    expect(plan?.changes).toEqual([{ op: 'insert', index: b.index, cell: b.cell }]);
  });

  it('rotates to the new base keeping the ledger and only the edits after the save mark', () => {
    const { path, document, journal } = start();
    const a = document.insert({ source: 'a', cellType: 'code' });
    journal.append({ op: 'insert', index: a.index, cell: a.cell }, { key: 'k-a', operation: 'insert_cell', result: 1 });
    const saved = document.toIpynb();
    const mark = journal.markSaving(sha256(saved));
    const b = document.insert({ source: 'b', cellType: 'code' });
    journal.append({ op: 'insert', index: b.index, cell: b.cell }, undefined);
    journal.rotate(baseOf(path, saved), [{ key: 'k-a', operation: 'insert_cell', result: 1 }], mark);
    const c = document.insert({ source: 'c', cellType: 'code' });
    journal.append({ op: 'insert', index: c.index, cell: c.cell }, undefined);
    journal.close();

    const contents = read();
    expect(contents.header.base.sha256).toBe(sha256(saved));
    expect(contents.records.map((record) => record.change?.op === 'insert' && record.change.cell.source)).toEqual([
      'b',
      'c',
    ]);
    const plan = RoomJournal.planReplay(contents, path, sha256(saved));
    expect(plan?.ledger).toEqual([{ key: 'k-a', operation: 'insert_cell', result: 1 }]);
    const replayed = NotebookDocument.fromIpynb(saved, path);
    for (const change of plan?.changes ?? []) replayed.apply(change);
    expect(replayed.cells()).toEqual(document.cells());
  });

  it('reads the lines it keeps back from its file at each rotation, byte for byte (multi-byte text, two rotations)', () => {
    const { path, document, journal } = start();
    const insert = (source: string) => {
      const placed = document.insert({ source, cellType: 'code' });
      journal.append({ op: 'insert', index: placed.index, cell: placed.cell }, undefined);
    };
    insert('é'.repeat(300));
    const first = document.toIpynb();
    const firstMark = journal.markSaving(sha256(first));
    insert('日本'.repeat(200));
    insert('plain');
    journal.rotate(baseOf(path, first), [], firstMark);
    const second = document.toIpynb();
    const secondMark = journal.markSaving(sha256(second));
    insert('✓ after');
    journal.rotate(baseOf(path, first), [], firstMark);
    journal.rotate(baseOf(path, second), [], secondMark);
    journal.close();
    expect(read().records.map((record) => record.change?.op === 'insert' && record.change.cell.source)).toEqual([
      '✓ after',
    ]);
  });

  describe('with a blob store', () => {
    const big = (fill: string) => fill.repeat(5000);
    const withBlobs = () => {
      const blobs = new OutputBlobStore({ dir: join(dir, 'blobs'), thresholdChars: 1000, fsync: false });
      settings = { ...settings, maxBytes: 1024 * 1024, blobs };
      return blobs;
    };
    const outputCell = (document: NotebookDocument, text: string) => {
      const cell = document.cells()[0];
      if (!cell) throw new Error('no cell');
      return document.setExecutionState(cell.id, [{ output_type: 'stream', name: 'stdout', text }], 1);
    };

    it('journals a large output as a reference to its blob, and reads it back whole', () => {
      const blobs = withBlobs();
      const { journal, document } = start();
      journal.append({ op: 'set', cell: outputCell(document, big('é')) }, undefined);
      journal.appendExecution({
        execution_id: 'e1',
        cell_id: 'c',
        status: 'ok',
        outputs: [{ output_type: 'stream', name: 'stdout', text: big('é') }],
        execution_count: 1,
      } as never);
      journal.close();
      expect(readFileSync(journal.file, 'utf8').length).toBeLessThan(2000);
      expect(readdirSync(blobs.dir)).toEqual([sha256(Buffer.from(big('é'), 'utf8'))]);
      const contents = RoomJournal.read(settings.dir, id, blobs);
      if (typeof contents !== 'object') throw new Error('no journal');
      const [set, execution] = contents.records;
      // Read back as a reference to the blob (its text read when needed), not into the heap.
      const setOutput = set?.change?.op === 'set' ? set.change.cell.outputs[0] : undefined;
      expect(setOutput).toMatchObject({ output_type: 'stream', name: 'stdout' });
      expect(setOutput?.text).toBeInstanceOf(BlobText);
      expect((setOutput?.text as BlobText | undefined)?.text()).toBe(big('é'));
      expect((execution?.execution?.outputs[0]?.text as BlobText | undefined)?.text()).toBe(big('é'));
      // Written again (a resumed journal), it stays the same reference.
      RoomJournal.resume(settings, contents).close();
      const rewritten = readFileSync(journal.file, 'utf8');
      expect(rewritten.length).toBeLessThan(2000);
      expect(rewritten).toContain(sha256(Buffer.from(big('é'), 'utf8')));
    });

    it('removes a blob once no journal references it, keeping those another journal references', () => {
      const blobs = withBlobs();
      const { path, document, journal, text } = start();
      const other = RoomJournal.begin(
        settings,
        '1b0e7c4e-1d7a-4d35-9c55-3b1f7f1b2a10',
        baseOf(join(dir, 'b.ipynb'), text),
        [],
      );
      other.append({ op: 'set', cell: outputCell(document, big('s')) }, undefined);
      journal.append({ op: 'set', cell: outputCell(document, big('s')) }, undefined);
      journal.append({ op: 'set', cell: outputCell(document, big('o')) }, undefined);
      expect(readdirSync(blobs.dir)).toHaveLength(2);
      journal.rotate(baseOf(path, document.toIpynb()), [], Number.POSITIVE_INFINITY);
      expect(readdirSync(blobs.dir)).toEqual([sha256(Buffer.from(big('s'), 'utf8'))]);
      other.discard();
      expect(readdirSync(blobs.dir)).toEqual([]);
      journal.close();
    });

    it('after a crash: the sweep at start removes blobs no line names and temp files, never a referenced one', () => {
      const blobs = withBlobs();
      const { document, journal } = start();
      journal.append({ op: 'set', cell: outputCell(document, big('r')) }, undefined);
      journal.close();
      // Killed between writing a blob and the journal line naming it, and in the middle of a blob.
      const orphan = blobs.put(big('x'));
      writeFileSync(join(blobs.dir, `${orphan}.999.ffff.tmp`), 'torn');
      expect(RoomJournal.sweepBlobs(settings)).toBe(1);
      expect(readdirSync(blobs.dir)).toEqual([sha256(Buffer.from(big('r'), 'utf8'))]);
      const contents = RoomJournal.read(settings.dir, id, blobs);
      if (typeof contents !== 'object') throw new Error('no journal');
      const output = contents.records[0]?.change?.op === 'set' ? contents.records[0].change.cell.outputs[0] : undefined;
      expect((output?.text as BlobText | undefined)?.text()).toBe(big('r'));
    });
  });

  it('ignores a torn last line and resumes appending after the good ones', () => {
    const { path, text, document, journal } = start();
    const a = document.insert({ source: 'a', cellType: 'code' });
    journal.append({ op: 'insert', index: a.index, cell: a.cell }, undefined);
    journal.close();
    appendFileSync(RoomJournal.fileOf(settings.dir, id), '{"seq":2,"change":{"op":"ins');
    const resumed = RoomJournal.resume(settings, read());
    const b = document.insert({ source: 'b', cellType: 'code' });
    resumed.append({ op: 'insert', index: b.index, cell: b.cell }, undefined);
    resumed.close();
    const plan = RoomJournal.planReplay(read(), path, sha256(text));
    expect(plan?.changes).toHaveLength(2);
  });

  it('reports when it outgrows its cap, and a rotation brings it back under', () => {
    const { path, text, document, journal } = start();
    const cell = document.cells()[0];
    if (!cell) throw new Error('no cell');
    while (!journal.overCap) journal.append({ op: 'set', cell: { ...cell, source: 'x'.repeat(500) } }, undefined);
    journal.rotate(baseOf(path, text), [], Number.POSITIVE_INFINITY);
    expect(journal.overCap).toBe(false);
    expect(readFileSync(journal.file, 'utf8').trim().split('\n')).toHaveLength(1);
    journal.close();
  });

  it('calls a journal with an unreadable header corrupt', () => {
    start().journal.close();
    writeFileSync(RoomJournal.fileOf(settings.dir, id), 'not json\n');
    expect(RoomJournal.read(settings.dir, id)).toBe('corrupt');
  });
});
