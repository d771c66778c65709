import { type CellHost, type CellPlace, CellView } from './cell-view.js';
import { el, icon } from './element.js';
import type { NotebookSnapshot, SnapshotPeer } from './notebook-snapshot.js';
import { peerChip } from './peer-chip.js';
import type { ConnectionState } from './room-stream.js';
import { syncChildren } from './sync-children.js';

/**
 * The notebook page: its header (title, connection, kernel, who is here) and one {@link CellView}
 * per cell id, updated in place from each snapshot; cells are created, moved or removed only when
 * the notebook's order says so.
 */
export class NotebookView {
  readonly #views = new Map<string, CellView>();
  readonly #title = document.getElementById('title') as HTMLElement;
  readonly #status = document.getElementById('status') as HTMLElement;
  readonly #peers = document.getElementById('peers') as HTMLElement;
  readonly #connection = el('span', { className: 'connection connecting', textContent: 'connecting…' });
  readonly #kernel = el('span', { className: 'kernel' });
  readonly #conditions = el('div', { className: 'conditions', attrs: { role: 'status' } });
  readonly #cells = el('div', { className: 'cells' });
  #myPeerId: string | undefined;

  public constructor(
    content: HTMLElement,
    private readonly host: CellHost,
  ) {
    this.#status.replaceChildren(this.#connection, this.#kernel);
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
  }

  /** The page's own peer of the room (from the stream's `hello`); it is not shown on cells as "another" peer. */
  public set myPeerId(peerId: string | undefined) {
    this.#myPeerId = peerId;
  }

  public connection(state: ConnectionState): void {
    this.#connection.className = `connection ${state}`;
    this.#connection.textContent =
      state === 'live' ? 'live' : state === 'reconnecting' ? 'reconnecting…' : 'connecting…';
  }

  public apply(snapshot: NotebookSnapshot): void {
    this.drawTitle(snapshot.path, snapshot.notebookId);
    this.drawKernel(snapshot);
    this.drawPeers(snapshot.peers);
    this.#conditions.replaceChildren(
      ...snapshot.conditions.map((condition) =>
        el('p', { className: `condition ${condition.kind}`, textContent: condition.message }),
      ),
    );
    this.#conditions.hidden = snapshot.conditions.length === 0;

    const order = snapshot.cells.map((cell) => cell.id);
    const seen = new Set(order);
    for (const [id, view] of this.#views) {
      if (seen.has(id)) continue;
      view.destroy();
      this.#views.delete(id);
    }
    const others = snapshot.peers.filter((peer) => peer.peerId === null || peer.peerId !== this.#myPeerId);
    const queued = new Set(snapshot.queued);
    const nodes = snapshot.cells.map((cell, index) => {
      const place: CellPlace = {
        order,
        index,
        running: snapshot.running === cell.id,
        queued: queued.has(cell.id),
        presentLabels: others.filter((peer) => peer.cellId === cell.id).map((peer) => peer.label),
        runningLabels: snapshot.peers.filter((peer) => peer.runningCellId === cell.id).map((peer) => peer.label),
      };
      let view = this.#views.get(cell.id);
      if (view) view.update(cell, place);
      else {
        view = new CellView(cell, place, this.host);
        this.#views.set(cell.id, view);
      }
      return view.element;
    });
    syncChildren(this.#cells, nodes);
    if (nodes.length === 0 && this.#cells.childElementCount === 0) {
      this.#cells.append(el('p', { className: 'empty-notebook', textContent: 'No cells yet: add one below.' }));
    }
  }

  /** The notebook's path (its directory quieter than its file name), or `untitled <id>`. */
  private drawTitle(path: string | null, notebookId: string): void {
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

  private drawKernel(snapshot: NotebookSnapshot): void {
    const { runtime } = snapshot;
    const state = runtime.state === 'ready' ? (runtime.kernel_status ?? 'ready') : runtime.state.replace('_', ' ');
    this.#kernel.className = `kernel ${state.replace(/\s/g, '-')}`;
    this.#kernel.textContent = `kernel ${state}`;
    this.#kernel.title = runtime.reason ?? '';
  }

  private drawPeers(peers: readonly SnapshotPeer[]): void {
    this.#peers.replaceChildren(
      ...peers.map((peer) => {
        const me = peer.peerId !== null && peer.peerId === this.#myPeerId;
        const chip = peerChip(peer.label, me ? 'me' : '');
        if (me) chip.append(el('span', { className: 'you', textContent: ' (you)' }));
        return chip;
      }),
    );
  }
}
