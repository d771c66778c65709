import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CellView } from './cell-view.js';
import { CommandKeys } from './command-keys.js';
import { LiveDocument } from './live-document.js';
import type { SnapshotCell } from './notebook-snapshot.js';
import type { PageRequest } from './page-api.js';

const cell = (id: string): SnapshotCell => ({
  id,
  cell_type: 'code',
  source: '',
  outputs: [],
  execution_count: null,
  metadata: {},
  version: 'v',
});

/** A key press as the page's `keydown` listener gets it (no DOM: only what the handler reads). */
interface FakeKey {
  readonly key: string;
  readonly target: { closest(selector: string): unknown } | null;
  readonly defaultPrevented: boolean;
  readonly altKey: boolean;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
  readonly shiftKey: boolean;
  prevented: boolean;
  preventDefault(): void;
}

function press(key: string, modifiers: Partial<Omit<FakeKey, 'key' | 'prevented' | 'preventDefault'>> = {}): FakeKey {
  return {
    key,
    target: { closest: () => null },
    defaultPrevented: false,
    altKey: false,
    ctrlKey: false,
    metaKey: false,
    shiftKey: false,
    ...modifiers,
    prevented: false,
    preventDefault() {
      this.prevented = true;
    },
  };
}

/** A page of cells a, b, c with `selectedId` selected: what the keys sent, selected, edited and ran. */
function page(selectedId: string | undefined, answer: unknown = {}) {
  const document = new LiveDocument(1, [cell('a'), cell('b'), cell('c')]);
  const sent: PageRequest[] = [];
  const selections: string[] = [];
  const ran: string[] = [];
  const edited: string[] = [];
  let selected = selectedId;
  const keys = new CommandKeys({
    document: () => document,
    selected: () => selected,
    view: (cellId) =>
      ({
        runFromKeyboard: async (advance: boolean) => {
          ran.push(`${cellId}${advance ? '+advance' : ''}`);
        },
        edit: () => edited.push(cellId),
      }) as unknown as CellView,
    select: (cellId) => {
      selected = cellId;
      selections.push(cellId);
    },
    send: async (request) => {
      sent.push(request);
      return answer;
    },
  });
  const handle = (event: FakeKey) => keys.handle(event as unknown as KeyboardEvent);
  return { handle, sent, selections, ran, edited };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe(CommandKeys, () => {
  it('moves the selection with the arrows and j/k, staying put at either end', async () => {
    const p = page('b');
    await p.handle(press('ArrowDown'));
    await p.handle(press('j'));
    await p.handle(press('k'));
    await p.handle(press('ArrowUp'));
    await p.handle(press('ArrowUp'));
    expect(p.selections).toEqual(['c', 'b', 'a']);
    const top = page('a');
    await top.handle(press('k'));
    expect(top.selections).toEqual([]);
  });

  it('Enter edits; Shift+Enter runs and selects the next cell; Ctrl or Cmd+Enter runs and stays', async () => {
    const p = page('b');
    await p.handle(press('Enter'));
    expect(p.edited).toEqual(['b']);
    await p.handle(press('Enter', { ctrlKey: true }));
    await p.handle(press('Enter', { metaKey: true }));
    expect(p.selections).toEqual([]);
    await p.handle(press('Enter', { shiftKey: true }));
    expect(p.ran).toEqual(['b', 'b', 'b']);
    expect(p.selections).toEqual(['c']);
  });

  it('adds a code cell above with a and below with b, and selects the new cell', async () => {
    const above = page('b', { cell: { id: 'new' } });
    await above.handle(press('a'));
    expect(above.sent).toEqual([{ type: 'insert_cell', source: '', cell_type: 'code', index: 1 }]);
    expect(above.selections).toEqual(['new']);
    const below = page('b', { cell: { id: 'new' } });
    await below.handle(press('b'));
    expect(below.sent).toEqual([{ type: 'insert_cell', source: '', cell_type: 'code', index: 2 }]);
    expect(below.selections).toEqual(['new']);
  });

  it('selects nothing new when the insert was refused', async () => {
    const p = page('b', undefined);
    await p.handle(press('b'));
    expect(p.sent).toHaveLength(1);
    expect(p.selections).toEqual([]);
  });

  it('deletes on d pressed twice within 800 ms, then selects the next cell (the one before at the end)', async () => {
    const now = vi.spyOn(performance, 'now');
    const p = page('b');
    now.mockReturnValue(10_000);
    await p.handle(press('d'));
    expect(p.sent).toEqual([]);
    now.mockReturnValue(10_500);
    await p.handle(press('d'));
    expect(p.sent).toEqual([{ type: 'delete_cell', cell_id: 'b' }]);
    expect(p.selections).toEqual(['c']);
    const last = page('c');
    now.mockReturnValue(20_000);
    await last.handle(press('d'));
    now.mockReturnValue(20_100);
    await last.handle(press('d'));
    expect(last.selections).toEqual(['b']);
  });

  it('does not delete on two d presses further apart than 800 ms, nor on a single d just after the page opened', async () => {
    const now = vi.spyOn(performance, 'now');
    const p = page('b');
    now.mockReturnValue(10_000);
    await p.handle(press('d'));
    now.mockReturnValue(11_000);
    await p.handle(press('d'));
    expect(p.sent).toEqual([]);
    // The page's clock starts at 0 when it loads: a first d then is still one press.
    const fresh = page('b');
    now.mockReturnValue(300);
    await fresh.handle(press('d'));
    expect(fresh.sent).toEqual([]);
  });

  it('m makes the cell markdown, y makes it code, z undoes', async () => {
    const p = page('a');
    await p.handle(press('m'));
    await p.handle(press('y'));
    await p.handle(press('z'));
    expect(p.sent).toEqual([
      { type: 'update_cell', cell_id: 'a', cell_type: 'markdown' },
      { type: 'update_cell', cell_id: 'a', cell_type: 'code' },
      { type: 'undo' },
    ]);
  });

  it('takes a key it handles from the browser, and leaves any other key alone', async () => {
    const p = page('b');
    const handled = press('j');
    await p.handle(handled);
    expect(handled.prevented).toBe(true);
    const other = press('x');
    await p.handle(other);
    expect(other.prevented).toBe(false);
    expect(p.sent).toEqual([]);
  });

  it('leaves keys to a text, field, button or link that has the focus, and keys with Alt or a modifier other than for Enter', async () => {
    const p = page('b');
    const inEditor = press('j', {
      target: { closest: (selector: string) => (selector.includes('.cm-editor') ? {} : null) },
    });
    await p.handle(inEditor);
    await p.handle(press('j', { altKey: true }));
    await p.handle(press('j', { ctrlKey: true }));
    await p.handle(press('z', { metaKey: true }));
    await p.handle(press('j', { defaultPrevented: true }));
    expect(p.selections).toEqual([]);
    expect(p.sent).toEqual([]);
    expect(inEditor.prevented).toBe(false);
  });

  it('does nothing without a selected cell, or when the selected cell is gone', async () => {
    for (const selected of [undefined, 'gone']) {
      const p = page(selected);
      const key = press('j');
      await p.handle(key);
      await p.handle(press('z'));
      expect(p.selections).toEqual([]);
      expect(p.sent).toEqual([]);
      expect(key.prevented).toBe(false);
    }
  });
});
