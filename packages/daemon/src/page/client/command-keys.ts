import type { CellView } from './cell-view.js';
import type { LiveDocument } from './live-document.js';
import type { PageRequest } from './page-api.js';

/** What the command keys need of the notebook's page. */
export interface CommandKeysHost {
  document(): LiveDocument | undefined;
  /** The selected cell's id, if any. */
  selected(): string | undefined;
  /** The cell's view when it is drawn. */
  view(cellId: string): CellView | undefined;
  /** Selects the cell and scrolls it into view. */
  select(cellId: string): void;
  /** Sends a person's request; its answer, or `undefined` when it was refused (the page says why). */
  send(request: PageRequest): Promise<unknown>;
}

/** The keys {@link CommandKeys.handle} takes. */
const commandKeys: ReadonlySet<string> = new Set([
  'Enter',
  'ArrowDown',
  'ArrowUp',
  'j',
  'k',
  'a',
  'b',
  'd',
  'm',
  'y',
  'z',
]);

/** Jupyter's command keys (see {@link CommandKeys.handle}). */
export class CommandKeys {
  /**
   * When `d` was last pressed (`d d` deletes). Never, at first: the page's clock starts at 0 when it
   * loads, so a 0 here made a single `d` in the page's first 800 ms delete the cell.
   */
  #lastD = Number.NEGATIVE_INFINITY;

  public constructor(private readonly host: CommandKeysHost) {}

  /**
   * Jupyter's command keys, on the selected cell while no text has the caret: Enter edits, Shift+Enter
   * runs and moves on, Ctrl/Cmd+Enter runs, ↑/k and ↓/j move the selection, a and b add a code cell
   * above and below, d d deletes, m and y make it markdown and code, z undoes the person's last edit.
   */
  public async handle(event: KeyboardEvent): Promise<void> {
    const target = event.target as Element | null;
    // Keys meant for what has the focus (a text, a field, a button, a link) are left to it.
    if (event.defaultPrevented || event.altKey) return;
    if (target?.closest('.cm-editor, input, textarea, select, iframe, button, a')) return;
    const document = this.host.document();
    const id = this.host.selected();
    if (!document || id === undefined || document.indexOf(id) < 0) return;
    const index = document.indexOf(id);
    const modified = event.ctrlKey || event.metaKey;
    const key = event.key;
    if (modified && key !== 'Enter') return;
    const view = this.host.view(id);
    const neighbour = (step: number) => document.cellAt(index + step)?.id;
    if (!commandKeys.has(key)) return;
    // A handled key does nothing else (no scroll by the arrows, no typing anywhere).
    event.preventDefault();
    switch (key) {
      case 'Enter':
        if (modified) await view?.runFromKeyboard(false);
        else if (event.shiftKey) {
          await view?.runFromKeyboard(false);
          const next = neighbour(1);
          if (next !== undefined) this.host.select(next);
        } else view?.edit();
        break;
      case 'ArrowDown':
      case 'j':
      case 'ArrowUp':
      case 'k': {
        const next = neighbour(key === 'ArrowDown' || key === 'j' ? 1 : -1);
        if (next !== undefined) this.host.select(next);
        break;
      }
      case 'a':
      case 'b': {
        const added = (await this.host.send({
          type: 'insert_cell',
          source: '',
          cell_type: 'code',
          index: key === 'a' ? index : index + 1,
        })) as { cell?: { id?: string } } | undefined;
        if (added?.cell?.id) this.host.select(added.cell.id);
        break;
      }
      case 'd': {
        const now = performance.now();
        if (now - this.#lastD > 800) {
          this.#lastD = now;
          break;
        }
        this.#lastD = Number.NEGATIVE_INFINITY;
        const next = neighbour(1) ?? neighbour(-1);
        await this.host.send({ type: 'delete_cell', cell_id: id });
        if (next !== undefined) this.host.select(next);
        break;
      }
      case 'm':
      case 'y':
        await this.host.send({ type: 'update_cell', cell_id: id, cell_type: key === 'm' ? 'markdown' : 'code' });
        break;
      case 'z':
        await this.host.send({ type: 'undo' });
        break;
    }
  }
}
