import { describe, expect, it } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { NotebookDocument } from './notebook-document.js';

const jupyterWritten = JSON.stringify({
  cells: [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Title\n', 'text'] },
    {
      cell_type: 'code',
      id: 'calc',
      metadata: { tags: ['x'] },
      execution_count: 3,
      outputs: [{ output_type: 'stream', name: 'stdout', text: ['4', '2\n'] }],
      source: 'print(42)',
    },
    { cell_type: 'code', metadata: {}, execution_count: null, outputs: [], source: [] },
  ],
  metadata: { kernelspec: { name: 'python3' } },
  nbformat: 4,
  nbformat_minor: 4,
});

describe(NotebookDocument, () => {
  it('reads Jupyter files: joins line lists, keeps ids and metadata, gives old cells new ids', () => {
    const document = NotebookDocument.fromIpynb(jupyterWritten, 'a.ipynb');
    const [intro, calc, blank] = document.cells();
    expect(intro).toMatchObject({ id: 'intro', cell_type: 'markdown', source: '# Title\ntext', outputs: [] });
    expect(calc).toMatchObject({ id: 'calc', execution_count: 3, metadata: { tags: ['x'] } });
    expect(calc?.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: '42\n' }]);
    expect(blank?.id).toMatch(/^[0-9a-f]{8}$/);
  });

  it('writes nbformat 4.5 with sources split into lines and no outputs on markdown', () => {
    const document = NotebookDocument.fromIpynb(jupyterWritten, 'a.ipynb');
    const written = JSON.parse(document.toIpynb());
    expect(written.nbformat_minor).toBe(5);
    expect(written.cells[0]).toEqual({
      cell_type: 'markdown',
      id: 'intro',
      metadata: {},
      source: ['# Title\n', 'text'],
    });
    expect(written.cells[1].source).toEqual(['print(42)']);
    expect(NotebookDocument.fromIpynb(document.toIpynb(), 'again').cells()).toEqual(document.cells());
  });

  it('keeps the attachments of a markdown cell through a load, a replayed change and a save, and writes none for a code cell', () => {
    const pasted = { 'plot.png': { 'image/png': 'iVBORw0KGgo=' } };
    const text = JSON.stringify({
      cells: [
        {
          cell_type: 'markdown',
          id: 'notes',
          metadata: {},
          source: '![plot](attachment:plot.png)',
          attachments: pasted,
        },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    });
    const document = NotebookDocument.fromIpynb(text, 'a.ipynb');
    expect(document.cell('notes').attachments).toEqual(pasted);
    expect(JSON.parse(document.toIpynb()).cells[0].attachments).toEqual(pasted);
    // A change the journal replays (the cell as it is after it) keeps them too.
    const replayed = NotebookDocument.fromIpynb(text, 'b.ipynb');
    replayed.apply({ op: 'set', cell: { ...document.cell('notes'), source: 'edited ![plot](attachment:plot.png)' } });
    expect(JSON.parse(replayed.toIpynb()).cells[0]).toMatchObject({
      source: ['edited ![plot](attachment:plot.png)'],
      attachments: pasted,
    });
    // As code (nbformat allows none there) they are not written, and come back with the markdown type.
    document.update('notes', { cellType: 'code' });
    expect(JSON.parse(document.toIpynb()).cells[0].attachments).toBeUndefined();
    document.update('notes', { cellType: 'markdown' });
    expect(JSON.parse(document.toIpynb()).cells[0].attachments).toEqual(pasted);
  });

  it('counts a version per change and moves, updates and clears cells', () => {
    const document = NotebookDocument.empty();
    const a = document.insert({ source: 'a', cellType: 'code' }).cell;
    const b = document.insert({ source: 'b', cellType: 'code', index: 0 }).cell;
    expect(document.cells().map((cell) => cell.source)).toEqual(['b', 'a']);
    expect(document.move(b.id, a.id)).toBe(1);
    document.setExecutionState(a.id, [{ output_type: 'stream', name: 'stdout', text: 'x' }], 1);
    expect(document.update(a.id, { cellType: 'markdown' }).outputs).toEqual([]);
    document.delete(b.id);
    expect(document.version).toBe(6);
    expect(() => document.move(a.id, a.id)).toThrowError(expect.objectContaining({ kind: 'badRequest' }));
  });

  it.each([
    ['{', /not valid JSON/],
    ['[]', /top level is not a JSON object/],
    ['{"nbformat": 3, "cells": []}', /nbformat 3 is not supported/],
    ['{"nbformat": 4, "cells": [{"cell_type": "widget", "source": ""}]}', /cell 0 has cell_type "widget"/],
    ['{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5, "outputs": []}]}', /cell 0 has a source/],
  ])('refuses %s with a reason', (text, reason) => {
    let caught: unknown;
    try {
      NotebookDocument.fromIpynb(text, '/n/bad.ipynb');
    } catch (error) {
      caught = error;
    }
    expect(DaemonError.is(caught, 'notebookLoadFailed')).toBe(true);
    expect((caught as Error).message).toMatch(/^Cannot load \/n\/bad\.ipynb: /);
    expect((caught as Error).message).toMatch(reason);
  });
  it('finds every cell by id through inserts, replayed changes, deletes and a reload, and never reuses a held id', () => {
    const document = NotebookDocument.fromIpynb(jupyterWritten, 'a.ipynb');
    const inserted = document.insert({ source: 'x = 1', cellType: 'code', index: 1 }).cell;
    expect(document.indexOf(inserted.id)).toBe(1);
    // A replayed `set` replaces the cell: edits after it change the replacement, not the old one.
    document.apply({ op: 'set', cell: { ...document.cell('calc'), source: 'print(43)' } });
    document.update('calc', { source: 'print(44)' });
    expect(document.cell('calc').source).toBe('print(44)');
    expect(document.cells().find((cell) => cell.id === 'calc')?.source).toBe('print(44)');
    document.delete('intro');
    expect(document.has('intro')).toBe(false);
    expect(() => document.cell('intro')).toThrow(DaemonError);
    document.apply({ op: 'insert', index: 0, cell: { ...inserted, id: 'intro' } });
    expect(document.indexOf('intro')).toBe(0);
    expect(() => document.apply({ op: 'insert', index: 0, cell: inserted })).toThrow(/it exists/);
    document.move('intro', 'calc');
    expect(document.cell('intro').source).toBe('x = 1');
    // A reload: the old cells are gone by id, the file's are found.
    document.replaceWith(NotebookDocument.fromIpynb(jupyterWritten, 'a.ipynb'));
    expect(document.has(inserted.id)).toBe(false);
    expect(document.cell('calc').source).toBe('print(42)');
    expect(document.indexOf('calc')).toBe(1);
    const ids = new Set(document.cells().map((cell) => cell.id));
    for (let i = 0; i < 200; i++) {
      const { cell } = document.insert({ source: '', cellType: 'raw' });
      expect(ids.has(cell.id)).toBe(false);
      ids.add(cell.id);
    }
  });
});

describe('NotebookDocument kernel', () => {
  const withMetadata = (metadata: unknown): NotebookDocument =>
    NotebookDocument.fromIpynb(JSON.stringify({ cells: [], metadata, nbformat: 4, nbformat_minor: 5 }), 'test');

  it("asks for the notebook's kernelspec, with its language, and for python3 when the notebook names none", () => {
    expect(withMetadata({ kernelspec: { name: 'ir', language: 'R' } }).kernelRequest()).toEqual({
      name: 'ir',
      language: 'R',
    });
    expect(
      withMetadata({ kernelspec: { name: 'conda-env-x-py' }, language_info: { name: 'python' } }).kernelRequest(),
    ).toEqual({ name: 'conda-env-x-py', language: 'python' });
    expect(withMetadata({ language_info: { name: 'R' } }).kernelRequest()).toEqual({ name: 'r', language: 'R' });
    expect(withMetadata({}).kernelRequest()).toEqual({ name: 'python3' });
    expect(withMetadata({ kernelspec: { name: '  ' } }).kernelRequest()).toEqual({ name: 'python3' });
    expect(NotebookDocument.empty().kernelRequest()).toEqual({ name: 'python3', language: 'python' });
  });

  it('writes the kernel a new notebook was created for into its metadata', () => {
    const document = NotebookDocument.forKernel({ name: 'ir', displayName: 'R', language: 'R' });
    expect(JSON.parse(document.toIpynb()).metadata).toEqual({
      kernelspec: { name: 'ir', display_name: 'R', language: 'R' },
      language_info: { name: 'R' },
    });
    expect(document.kernelRequest()).toEqual({ name: 'ir', language: 'R' });
  });
});
