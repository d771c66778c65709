import type {
  WireExecutionState,
  WireInputRequestEvent,
  WireRoomCondition,
  WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import { type CellHost, type CellPlace, CellView } from './cell-view.js';
import { CommandKeys } from './command-keys.js';
import { cellGapPx, cellTops, drawnRange, estimateHeight } from './drawn-range.js';
import { el, icon } from './element.js';
import { KernelBar } from './kernel-bar.js';
import { connectionLabel, kernelStateLabel } from './kernel-state-label.js';
import type { LiveDocument } from './live-document.js';
import { loadCellEditor, loadedCellEditor } from './load-cell-editor.js';
import type { SnapshotCell, SnapshotPeer } from './notebook-snapshot.js';
import { peerChip } from './peer-chip.js';
import type { ConnectionState } from './room-stream.js';
import { syncChildren } from './sync-children.js';

/** Who is in the room, where, and what runs and waits. */
export interface NotebookActivity {
  readonly peers: readonly SnapshotPeer[];
  readonly running: string | null;
  readonly queued: readonly string[];
}

/** How long the page waits after the last scroll before it makes editors (ms): none is made mid-scroll. */
const editorsAfterScrollMs = 150;

/**
 * The notebook page: its header (title, connection, kernel, who is here) and its cells, a long
 * notebook's drawn virtually: only the cells near the viewport are in the document (one {@link CellView} each,
 * its editor made when the page is idle or the person goes to it), the others stand as spacers of their measured height (or an estimate until
 * they were drawn once). A cell the person edits stays drawn wherever it is. When a drawn cell
 * above the viewport changes height, the page scrolls by as much, so what the person looks at
 * stays put. Cells are updated in place, by id, from what the {@link LiveDocument} reports.
 */
export class NotebookView {
  readonly #views = new Map<string, CellView>();
  readonly #heights = new Map<string, number>();
  readonly #title = document.getElementById('title') as HTMLElement;
  readonly #status = document.getElementById('status') as HTMLElement;
  readonly #peers = document.getElementById('peers') as HTMLElement;
  readonly #connection = el('span', { className: 'connection connecting', textContent: 'connecting…' });
  readonly #kernel = el('span', { className: 'kernel' });
  readonly #kernelBar: KernelBar;
  /** The code's `input()` waiting for the person, by cell (the page's own runs only). */
  readonly #inputs = new Map<string, WireInputRequestEvent>();
  readonly #conditions = el('div', { className: 'conditions', attrs: { role: 'status' } });
  readonly #cells = el('div', { className: 'cells' });
  readonly #empty = el('p', { className: 'empty-notebook', textContent: 'No cells yet: add one below.' });
  readonly #spacers: HTMLElement[] = [];
  readonly #resize = new ResizeObserver((entries) => this.measured(entries));
  #document: LiveDocument | undefined;
  #activity: NotebookActivity = { peers: [], running: null, queued: [] };
  #myPeerId: string | undefined;
  /** The top of each cell in the cells' box, and the total at the end (`undefined`: to compute). */
  #tops: Float64Array | undefined;
  /** The range drawn last ([first, last] indices), to skip a scroll that needs no change. */
  #drawn: readonly [number, number] = [0, -1];
  #frame = 0;
  #editorsScheduled = false;
  #lastScroll = 0;
  /** The cell the command keys act on (Jupyter's command mode), if any. */
  #selected: string | undefined;

  public constructor(
    content: HTMLElement,
    private readonly host: CellHost,
  ) {
    this.#kernelBar = new KernelBar({
      interrupt: async () => {
        await this.host.send({ type: 'interrupt' });
      },
      restart: async () => {
        if (await this.host.send({ type: 'restart_kernel' }))
          this.host.notice('The kernel restarted: its variables are gone.');
      },
      runAll: () => this.runAll(),
      clearOutputs: async () => {
        for (const cell of this.#document?.cells() ?? []) {
          if (cell.cell_type === 'code' && cell.outputs.length > 0) {
            await this.host.send({ type: 'clear_outputs', cell_id: cell.id });
          }
        }
      },
      save: async () => {
        const saved = (await this.host.send({ type: 'save' })) as { notebook_path?: string } | undefined;
        if (saved?.notebook_path) this.host.notice(`Saved to ${saved.notebook_path}`);
      },
      undo: async () => {
        await this.host.send({ type: 'undo' });
      },
    });
    this.#status.replaceChildren(this.#connection, this.#kernel, this.#kernelBar.element);
    const add = (label: string, cellType: 'code' | 'markdown') => {
      const button = el(
        'button',
        { type: 'button', className: `add-cell ${cellType}`, title: `Add a ${label} cell at the end` },
        [icon('add'), el('span', { textContent: label })],
      );
      button.dataset.action = `add-${cellType}`;
      button.addEventListener(
        'click',
        () => void this.host.send({ type: 'insert_cell', source: '', cell_type: cellType }),
      );
      return button;
    };
    content.replaceChildren(
      this.#conditions,
      this.#cells,
      el('div', { className: 'add-bar' }, [add('Code', 'code'), add('Markdown', 'markdown')]),
    );
    addEventListener(
      'scroll',
      () => {
        this.#lastScroll = performance.now();
        this.schedule();
      },
      { passive: true },
    );
    addEventListener('resize', () => this.schedule(true));
    const commandKeys = new CommandKeys({
      document: () => this.#document,
      selected: () => this.#selected,
      view: (cellId) => this.#views.get(cellId),
      select: (cellId) => this.select(cellId, true),
      send: (request) => this.host.send(request),
    });
    addEventListener('keydown', (event) => void commandKeys.handle(event));
    // A click on a cell outside its text, buttons, inputs and frames selects it.
    this.#cells.addEventListener('mousedown', (event) => {
      const target = event.target as Element;
      if (target.closest('.cm-editor, .source-static, button, input, a, iframe')) return;
      const section = target.closest<HTMLElement>('section.cell');
      if (section?.dataset.cellId) this.select(section.dataset.cellId);
    });
  }

  /** Selects `cellId` for the command keys (outlined; scrolled into view when asked). */
  public select(cellId: string, scroll = false): void {
    if (this.#selected !== cellId) {
      const before = this.#selected === undefined ? undefined : this.#views.get(this.#selected);
      if (before) before.selected = false;
      this.#selected = cellId;
    }
    const view = this.#views.get(cellId);
    if (view) {
      view.selected = true;
      if (scroll) view.element.scrollIntoView({ block: 'nearest' });
    }
  }

  /** The page's own peer of the room (from the stream's `hello`); it is not shown on cells as "another" peer. */
  public set myPeerId(peerId: string | undefined) {
    this.#myPeerId = peerId;
    this.drawPeers();
  }

  public connection(state: ConnectionState): void {
    this.#connection.className = `connection ${state}`;
    this.#connection.textContent = connectionLabel(state);
  }

  /** Shows `document` (a fresh snapshot's): every drawn cell updated, gone ones removed. */
  public showDocument(document: LiveDocument): void {
    this.#document = document;
    for (const [id, view] of this.#views) {
      const cell = document.cell(id);
      if (cell) view.update(cell, this.placeOf(cell, document.indexOf(id)));
    }
    this.orderChanged();
  }

  /** Some cell holds a person's text not in the room yet. */
  public hasUnsavedText(): boolean {
    for (const view of this.#views.values()) if (view.unsaved) return true;
    return false;
  }

  /** Cells came, went or moved. */
  public orderChanged(): void {
    this.#tops = undefined;
    this.draw(true);
    // Neighbours' move buttons and indices follow the order.
    this.replaceDrawn();
  }

  /** The cell `cellId` changed (its content, outputs or execution count). */
  public cellChanged(cellId: string): void {
    const document = this.#document;
    const cell = document?.cell(cellId);
    if (!document || !cell) return;
    const view = this.#views.get(cellId);
    if (view) view.update(cell, this.placeOf(cell, document.indexOf(cellId)));
    else if (!this.#heights.has(cellId)) {
      this.#tops = undefined;
      this.schedule(true);
    }
  }

  public activity(activity: NotebookActivity): void {
    this.#activity = activity;
    this.drawPeers();
    this.replaceDrawn();
  }

  /** A peer said which cell it is on. */
  public presence(peerId: string, label: string, cellId: string | null): void {
    const peers = this.#activity.peers.some((peer) => peer.peerId === peerId)
      ? this.#activity.peers.map((peer) => (peer.peerId === peerId ? { ...peer, cellId } : peer))
      : [...this.#activity.peers, { peerId, label, cellId, runningCellId: null }];
    this.activity({ ...this.#activity, peers });
  }

  public conditions(conditions: readonly WireRoomCondition[]): void {
    this.#conditions.replaceChildren(
      ...conditions.map((condition) =>
        el('p', { className: `condition ${condition.kind}`, textContent: condition.message }),
      ),
    );
    this.#conditions.hidden = conditions.length === 0;
  }

  /** The notebook's path (its directory quieter than its file name), or `untitled <id>`. */
  public title(path: string | null, notebookId: string): void {
    const name = path ?? `untitled ${notebookId}`;
    if (this.#title.title === name) return;
    this.#title.title = name;
    const cut = path === null ? 'untitled '.length : path.lastIndexOf('/') + 1;
    const first = name.slice(0, cut);
    const second = name.slice(cut);
    this.#title.replaceChildren(
      el('span', { className: path === null ? 'file' : 'dir', textContent: first }),
      el('span', { className: path === null ? 'dir' : 'file', textContent: second }),
    );
    document.title = `${path === null ? 'untitled' : second} · runtimed`;
  }

  public runtime(runtime: WireRuntimeState): void {
    const label = kernelStateLabel(runtime);
    this.#kernel.className = label.className;
    this.#kernel.textContent = label.text;
    this.#kernel.title = label.title;
    this.#kernelBar.runtime(runtime);
  }

  /** The code of a cell this page ran asks for a line (`input()`, `getpass()`): the cell asks the person. */
  public inputRequest(request: WireInputRequestEvent): void {
    this.#inputs.set(request.cell_id, request);
    this.cellChanged(request.cell_id);
    // A cell far from the viewport is drawn (a waiting input keeps it drawn).
    this.schedule(true);
  }

  /** Execution `executionId` no longer waits for input (answered, or it ended). */
  public inputDone(executionId: string): void {
    for (const [cellId, request] of this.#inputs) {
      if (request.execution_id !== executionId) continue;
      this.#inputs.delete(cellId);
      this.cellChanged(cellId);
    }
  }

  /**
   * Moves the person to the cell after `cellId` (Shift+Enter), its editor focused and in view; after
   * the last cell, a new code cell is added there first, as a Jupyter front end does.
   */
  public async focusAfter(cellId: string): Promise<void> {
    const document = this.#document;
    if (!document) return;
    let next = document.cellAt(document.indexOf(cellId) + 1)?.id;
    if (next === undefined) {
      const added = (await this.host.send({ type: 'insert_cell', source: '', cell_type: 'code' })) as
        | { cell?: { id?: string } }
        | undefined;
      next = added?.cell?.id;
    }
    if (next === undefined) return;
    const target = next;
    this.#tops = undefined;
    this.draw(true);
    const view = this.#views.get(target);
    if (!view) return;
    view.element.scrollIntoView({ block: 'nearest' });
    const editor = await view.makeEditor();
    editor?.focus();
  }

  /**
   * Runs every code cell in order, each after the one before ended well (the room stops the chain
   * at the first failure: the rest end aborted, not run).
   */
  private async runAll(): Promise<void> {
    let previous: string | undefined;
    for (const cell of this.#document?.cells() ?? []) {
      if (cell.cell_type !== 'code') continue;
      const started = (await this.host.send({
        type: 'execute_cell',
        cell_id: cell.id,
        allow_input: true,
        ...(previous === undefined ? {} : { run_after: previous }),
      })) as WireExecutionState | undefined;
      if (!started) return;
      previous = started.execution_id;
    }
  }

  /** Draws again at the next frame (a scroll, a resize, a cell no longer edited). */
  public schedule(force = false): void {
    if (force) this.#drawn = [0, -1];
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.draw(false);
    });
  }

  private drawPeers(): void {
    this.#peers.replaceChildren(
      ...this.#activity.peers.map((peer) => {
        const me = peer.peerId !== null && peer.peerId === this.#myPeerId;
        const chip = peerChip(peer.label, me ? 'me' : '');
        if (me) chip.append(el('span', { className: 'you', textContent: ' (you)' }));
        return chip;
      }),
    );
  }

  /** Each drawn cell's place again (the order or the activity changed). */
  private replaceDrawn(): void {
    const document = this.#document;
    if (!document) return;
    for (const [id, view] of this.#views) {
      const index = document.indexOf(id);
      const cell = document.cellAt(index);
      if (cell) view.update(cell, this.placeOf(cell, index));
    }
  }

  private placeOf(cell: SnapshotCell, index: number): CellPlace {
    const { peers, running, queued } = this.#activity;
    return {
      order: this.#document?.order ?? [],
      index,
      running: running === cell.id,
      queued: queued.includes(cell.id),
      presentLabels: peers
        .filter((peer) => (peer.peerId === null || peer.peerId !== this.#myPeerId) && peer.cellId === cell.id)
        .map((peer) => peer.label),
      runningLabels: peers.filter((peer) => peer.runningCellId === cell.id).map((peer) => peer.label),
      input: this.#inputs.get(cell.id),
    };
  }

  /** The top of each cell in the cells' box (index `length`: the total height). */
  private tops(): Float64Array {
    const document = this.#document;
    const length = document?.length ?? 0;
    if (this.#tops?.length === length + 1) return this.#tops;
    this.#tops = document ? cellTops(document, this.#heights) : new Float64Array(1);
    return this.#tops;
  }

  /**
   * Puts in the document the cells near the viewport and those being edited, spacers between
   * them; removes the others (their editors destroyed). `always`: even when the range is unchanged.
   */
  private draw(always: boolean): void {
    const document = this.#document;
    if (!document) return;
    const tops = this.tops();
    const length = document.length;
    const offset = this.#cells.getBoundingClientRect().top;
    const [first, last] = drawnRange(tops, length, -offset, innerHeight - offset);
    if (!always && first === this.#drawn[0] && last === this.#drawn[1]) return;
    this.#drawn = [first, last];

    const wanted = new Set<number>();
    for (let index = first; index <= last; index++) wanted.add(index);
    for (const [id, view] of this.#views) {
      const index = document.indexOf(id);
      if (index >= 0 && (wanted.has(index) || view.busy)) {
        wanted.add(index);
        continue;
      }
      this.#resize.unobserve(view.element);
      view.destroy();
      this.#views.delete(id);
    }
    const indices = [...wanted].sort((a, b) => a - b);
    const nodes: HTMLElement[] = [];
    let spacers = 0;
    let next = 0;
    const gap = (to: number) => {
      if (to <= next) return;
      const spacer =
        this.#spacers[spacers] ?? el('div', { className: 'cell-spacer', attrs: { 'aria-hidden': 'true' } });
      this.#spacers[spacers++] = spacer;
      spacer.style.height = `${(tops[to] as number) - (tops[next] as number)}px`;
      nodes.push(spacer);
    };
    for (const index of indices) {
      gap(index);
      const cell = document.cellAt(index) as SnapshotCell;
      let view = this.#views.get(cell.id);
      if (!view) {
        view = new CellView(cell, this.placeOf(cell, index), this.host);
        if (cell.id === this.#selected) view.selected = true;
        this.#views.set(cell.id, view);
        this.#resize.observe(view.element);
      }
      nodes.push(view.element);
      next = index + 1;
    }
    gap(length);
    if (length === 0) nodes.push(this.#empty);
    syncChildren(this.#cells, nodes);
    this.scheduleEditors();
  }

  /**
   * Makes the drawn cells' editors while the page is idle and not scrolling, the cells in the
   * viewport first, a few at a time (a scroll's frame never waits for them). The first idle time
   * after the first paint loads the editor's chunk (CodeMirror), then the editors are made.
   */
  private scheduleEditors(): void {
    if (this.#editorsScheduled) return;
    this.#editorsScheduled = true;
    requestIdleCallback((deadline) => {
      this.#editorsScheduled = false;
      const sinceScroll = performance.now() - this.#lastScroll;
      if (sinceScroll < editorsAfterScrollMs) {
        setTimeout(() => this.scheduleEditors(), editorsAfterScrollMs - sinceScroll);
        return;
      }
      if (!loadedCellEditor()) {
        void loadCellEditor().then(() => this.scheduleEditors());
        return;
      }
      const waiting = [...this.#views.values()].filter((view) => !view.hasEditor && view.element.isConnected);
      const distance = (view: CellView) => {
        const box = view.element.getBoundingClientRect();
        return box.bottom < 0 ? -box.bottom : box.top > innerHeight ? box.top - innerHeight : 0;
      };
      waiting.sort((a, b) => distance(a) - distance(b));
      for (const view of waiting) {
        if (deadline.timeRemaining() < 4) {
          this.scheduleEditors();
          return;
        }
        void view.makeEditor();
      }
    });
  }

  /**
   * Keeps each drawn cell's height (with its gap); a cell above the viewport that changed scrolls
   * the page by as much, so the cells in view do not move.
   */
  private measured(entries: readonly ResizeObserverEntry[]): void {
    let shift = 0;
    let changed = false;
    for (const entry of entries) {
      const element = entry.target as HTMLElement;
      const id = element.dataset.cellId;
      const cell = id === undefined ? undefined : this.#document?.cell(id);
      if (!cell || !element.isConnected) continue;
      const height = (entry.borderBoxSize[0]?.blockSize ?? element.offsetHeight) + cellGapPx;
      const before = this.#heights.get(cell.id) ?? estimateHeight(cell);
      this.#heights.set(cell.id, height);
      if (Math.abs(height - before) < 0.5) continue;
      changed = true;
      // Where its bottom was before it changed: above the viewport's top, everything in view moved.
      if (element.getBoundingClientRect().bottom - (height - before) <= 0) shift += height - before;
    }
    if (!changed) return;
    this.#tops = undefined;
    if (shift !== 0) scrollBy(0, shift);
    this.schedule(true);
  }
}
