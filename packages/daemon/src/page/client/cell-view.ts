import type { WireInputRequestEvent, WireOutput } from '@nteract-mcp/runtimed-protocol';
import type { CellEditor, CellLanguage } from './cell-editor.js';
import { el, type IconName, icon } from './element.js';
import { loadCellEditor, loadedCellEditor } from './load-cell-editor.js';
import type { SnapshotCell } from './notebook-snapshot.js';
import type { PageRequest } from './page-api.js';
import { peerChip } from './peer-chip.js';
import { showMarkdown } from './render-markdown.js';
import { renderOutput } from './render-output.js';
import { type SourceSendOutcome, SourceSync, type SourceSyncState } from './source-sync.js';
import { syncChildren } from './sync-children.js';

/** Where a cell stands in the notebook and the room, besides its own content. */
export interface CellPlace {
  /** The ids of the notebook's cells in order (for moves and inserts). */
  readonly order: readonly string[];
  readonly index: number;
  /** Its execution runs now / waits in the queue. */
  readonly running: boolean;
  readonly queued: boolean;
  /** The labels of the other peers on this cell, and of those whose execution of it runs. */
  readonly presentLabels: readonly string[];
  readonly runningLabels: readonly string[];
  /** The code of this cell's run waits for a line from the person (`input()`). */
  readonly input?: WireInputRequestEvent | undefined;
}

/** What a cell needs of the page. */
export interface CellHost {
  /** Sends a person's request; its answer, or `undefined` when it was refused (the page says why). */
  send(request: PageRequest): Promise<unknown>;
  /**
   * Sends the person's text of a cell written over the cell's `expectedVersion` (refused `stale`
   * when it changed since), with an idempotency `key` (a resend applies once).
   */
  sendSource(
    cellId: string,
    text: string,
    expectedVersion: string | undefined,
    key: string,
  ): Promise<SourceSendOutcome>;
  /** Says something to the person (the page's notice). */
  notice(message: string): void;
  /** Gives the code's `input()` the person's line. */
  answerInput(request: WireInputRequestEvent, value: string): Promise<void>;
  /** Moves the person to the next cell (adding one after the last). */
  focusAfter(cellId: string): Promise<void>;
  /** The person left the cell's text with Escape: the cell is selected for the command keys. */
  commandMode(cellId: string): void;
  /** The person's caret entered or left this cell's editor. */
  focusChanged(cellId: string, focused: boolean): void;
  /** Where an image at `path` relative to the notebook's folder is served. */
  fileUrl(path: string): string;
  /** Where this cell's HTML or SVG output `index` is served for its frame. */
  outputFrameUrl(cellId: string, index: number, version: string): string;
  /** The element of the cell's comment threads (the host's: kept up to date by it). */
  commentsOf(cellId: string): HTMLElement;
}

type Action = 'run' | 'interrupt' | 'edit' | 'toggle-type' | 'move-up' | 'move-down' | 'add-below' | 'delete';

/**
 * One cell of the page, kept while it is drawn (near the viewport, or edited) and updated in place:
 * its source shows as plain text until its editor is made (see {@link CellView.makeEditor}), once
 * (only its language changes with the cell type); the person's text and the room's are kept in
 * step by a {@link SourceSync}: another peer's change appears at once, merged into what the person
 * is typing, and the person's text goes to the room as they pause (the cell says when it could not,
 * and a Run waits for it); outputs are drawn again only when they changed (each output kept when it is the
 * same). A markdown cell shows its rendered text unless it is being edited (double-click or Edit;
 * Shift+Enter or leaving it renders it again).
 */
export class CellView {
  public readonly element: HTMLElement;
  readonly #prompt = el('div', { className: 'prompt' });
  readonly #author = el('span', { className: 'edited-by' });
  readonly #presence = el('span', { className: 'presence' });
  readonly #buttons = new Map<Action, HTMLButtonElement>();
  readonly #source = el('div', { className: 'source' });
  readonly #rendered = el('div', { className: 'rendered markdown-body', title: 'Double-click to edit' });
  readonly #outputs = el('div', { className: 'outputs' });
  /** The source as plain text until the editor is made (see {@link CellView.makeEditor}). */
  readonly #static = el('pre', { className: 'source-static', tabIndex: 0 });
  #editor: CellEditor | undefined;
  #destroyed = false;

  #cell: SnapshotCell;
  #place: CellPlace;
  readonly #sync: SourceSync;
  readonly #syncState = el('span', { className: 'sync-state', attrs: { role: 'status' } });
  /** Where the code's `input()` asks the person (shown while it waits). */
  readonly #inputRow = el('form', { className: 'input-request' });
  #inputShown: string | undefined;
  #deleteTimer: ReturnType<typeof setTimeout> | undefined;
  #selected = false;
  #editingMarkdown = false;
  #renderedText: string | undefined;
  #renderedAttachments: Readonly<Record<string, unknown>> | undefined;
  #outputKeys: string[] = [];
  #outputNodes: HTMLElement[] = [];

  public constructor(
    cell: SnapshotCell,
    place: CellPlace,
    private readonly host: CellHost,
  ) {
    this.#cell = cell;
    this.#place = place;
    this.#sync = new SourceSync(
      { text: cell.source, version: cell.version, editedBy: cell.edited_by },
      {
        localText: () => this.#editor?.text ?? this.#sync.roomText,
        merge: (base, remote) => {
          if (this.#editor) this.#editor.merge(base, remote.text, remote.editedBy);
          else this.#static.textContent = remote.text;
        },
        send: (text, expectedVersion, key) => this.host.sendSource(this.#cell.id, text, expectedVersion, key),
        stateChanged: (state, message) => this.showSyncState(state, message),
      },
    );
    this.#syncState.hidden = true;
    this.#outputs.hidden = true;
    this.#inputRow.hidden = true;
    this.element = el('section', { className: 'cell', id: `cell-${cell.id}` });
    this.element.dataset.cellId = cell.id;
    const tools = el('div', { className: 'tools', attrs: { role: 'toolbar', 'aria-label': 'Cell' } }, [
      this.makeButton('run', 'run', 'Run', 'Run (Shift+Enter)', true),
      this.makeButton('interrupt', 'stop', 'Interrupt', 'Interrupt the kernel', true),
      this.makeButton('edit', 'edit', 'Edit', 'Edit the markdown (double-click)', true),
      this.makeButton('toggle-type', undefined, '', 'Change the cell type'),
      this.makeButton('move-up', 'up', 'Move up', 'Move up'),
      this.makeButton('move-down', 'down', 'Move down', 'Move down'),
      this.makeButton('add-below', 'add', 'Add below', 'Add a code cell below'),
      this.makeButton('delete', 'delete', 'Delete', 'Delete the cell'),
    ]);
    this.#static.textContent = cell.source;
    this.#source.append(this.#static);
    // A click or Tab on the plain text makes the editor at once, with the caret where it was asked.
    this.#static.addEventListener('mousedown', (event) => {
      event.preventDefault();
      void this.makeEditor().then((editor) => editor?.focusAt(event.clientX, event.clientY));
    });
    this.#static.addEventListener('focus', () => void this.makeEditor().then((editor) => editor?.focus()));
    this.#rendered.addEventListener('dblclick', () => this.editMarkdown());
    this.element.append(
      el('div', { className: 'run-bar' }),
      tools,
      el('div', { className: 'gutter' }, [this.#prompt]),
      el('div', { className: 'body' }, [
        this.#source,
        this.#rendered,
        this.#outputs,
        this.#inputRow,
        el('div', { className: 'cell-foot' }, [this.#syncState, this.#author, this.#presence]),
        this.host.commentsOf(cell.id),
      ]),
    );
    this.draw();
  }

  public get id(): string {
    return this.#cell.id;
  }

  public get hasEditor(): boolean {
    return this.#editor !== undefined;
  }

  /**
   * The cell's editor, made if it was not yet: a cell is drawn with its source as plain text and
   * gets its editor when the page is idle or when the person goes to it, so that scrolling through
   * a long notebook does not wait for editors. It is made at once when the editor's chunk is
   * loaded (see {@link loadCellEditor}), else once it is; `undefined` for a cell destroyed by then.
   */
  public async makeEditor(): Promise<CellEditor | undefined> {
    const Editor = loadedCellEditor() ?? (await loadCellEditor());
    if (this.#destroyed) return undefined;
    if (this.#editor) return this.#editor;
    const editor = new Editor(this.#source, this.text, languageOf(this.#cell), {
      onEdit: () => this.#sync.edited(),
      onFocus: () => this.host.focusChanged(this.#cell.id, true),
      onBlur: () => this.left(),
      onRun: (advance) => void this.runFromKeyboard(advance),
      onEscape: () => {
        this.#editor?.blur();
        this.host.commandMode(this.#cell.id);
      },
    });
    this.#editor = editor;
    this.#static.remove();
    return editor;
  }

  /** The text in the editor (the room's when it has none yet). */
  private get text(): string {
    return this.#editor?.text ?? this.#sync.roomText;
  }

  /** The person's text is not all in the room yet (on its way, or kept while the daemon does not answer). */
  public get unsaved(): boolean {
    return this.#sync.pending;
  }

  /** The person is on this cell (its editor has the caret, their text is on its way, its markdown is open): it stays drawn. */
  public get busy(): boolean {
    return (
      this.#editor?.hasFocus === true || this.#sync.pending || this.#editingMarkdown || this.#place.input !== undefined
    );
  }

  /** Edits the cell: its editor made and focused (a markdown cell shows its text). */
  public edit(): void {
    if (this.#cell.cell_type === 'markdown') this.editMarkdown();
    else void this.makeEditor().then((editor) => editor?.focus());
  }

  /** Selected for the command keys (outlined), or not. */
  public set selected(selected: boolean) {
    this.#selected = selected;
    this.element.classList.toggle('selected', selected);
  }

  /** Takes the cell as the room has it now (in the room's order), and its place. */
  public update(cell: SnapshotCell, place: CellPlace): void {
    this.#cell = cell;
    this.#place = place;
    this.#sync.roomChanged({ text: cell.source, version: cell.version, editedBy: cell.edited_by });
    this.draw();
  }

  /**
   * Takes the cell off the page: it left the drawn range, or it is gone from the notebook; then the
   * person's text not in the room yet is lost with it, and the page says so, with the text.
   */
  public destroy(): void {
    this.#destroyed = true;
    if (this.#sync.pending) {
      const text = this.text;
      this.host.notice(
        `Cell ${this.#cell.id} was deleted before your edit reached the notebook; your text was not saved:\n${text.length > 500 ? `${text.slice(0, 500)}…` : text}`,
      );
    }
    this.#sync.close();
    clearTimeout(this.#deleteTimer);
    this.#editor?.destroy();
    this.element.remove();
  }

  /** Draws what changed since the last snapshot (text and classes compared first: no needless DOM writes). */
  private draw(): void {
    const cell = this.#cell;
    const place = this.#place;
    const code = cell.cell_type === 'code';
    const markdown = cell.cell_type === 'markdown';
    const state = place.running ? ' running' : place.queued ? ' queued' : '';
    setText(this.#prompt, code ? `[${state ? '*' : (cell.execution_count ?? ' ')}]` : '');
    setClass(this.element, `cell ${cell.cell_type}${state}${this.#selected ? ' selected' : ''}`);
    setClass(this.#prompt, `prompt${state}`);
    this.#editor?.setLanguage(languageOf(cell));

    setText(this.#author, cell.edited_by ? `edited by ${cell.edited_by}` : '');
    this.#author.hidden = !cell.edited_by;
    const presence = JSON.stringify([place.presentLabels, place.runningLabels]);
    if (this.#presence.dataset.labels !== presence) {
      this.#presence.dataset.labels = presence;
      this.#presence.replaceChildren(
        ...place.presentLabels.map((label) => peerChip(label, 'here')),
        ...place.runningLabels.map((label) => {
          const chip = peerChip(label, 'running-by');
          chip.prepend('running: ');
          return chip;
        }),
      );
      this.#presence.hidden = place.presentLabels.length + place.runningLabels.length === 0;
    }

    this.show('run', code);
    this.show('interrupt', code && place.running);
    this.show('edit', markdown && !this.#editingMarkdown);
    setText(this.button('toggle-type'), markdown ? 'Markdown' : code ? 'Code' : 'Raw');
    this.button('move-up').disabled = place.index === 0;
    this.button('move-down').disabled = place.index === place.order.length - 1;

    const rendered = markdown && !this.#editingMarkdown;
    this.#source.hidden = rendered;
    this.#rendered.hidden = !rendered;
    if (rendered) this.drawMarkdown();
    this.drawOutputs(cell.outputs);
    this.drawInput(place.input);
  }

  /** The code's `input()` as a line to type (a password hidden), sent with Enter; drawn once per request. */
  private drawInput(request: WireInputRequestEvent | undefined): void {
    if (request?.input_id === this.#inputShown) return;
    this.#inputShown = request?.input_id;
    this.#inputRow.hidden = request === undefined;
    if (!request) {
      this.#inputRow.replaceChildren();
      return;
    }
    const field = el('input', {
      type: request.password ? 'password' : 'text',
      className: 'input-field',
      attrs: { 'aria-label': request.prompt || 'Input', autocomplete: 'off' },
    });
    this.#inputRow.replaceChildren(
      el('label', { className: 'input-prompt', textContent: request.prompt || 'input:' }),
      field,
      el('span', { className: 'input-hint', textContent: 'Enter sends it to the code' }),
    );
    this.#inputRow.onsubmit = (event) => {
      event.preventDefault();
      field.disabled = true;
      void this.host.answerInput(request, field.value);
    };
    field.focus();
  }

  private drawMarkdown(): void {
    const text = this.text;
    if (text === this.#renderedText && this.#cell.attachments === this.#renderedAttachments) return;
    this.#renderedText = text;
    this.#renderedAttachments = this.#cell.attachments;
    if (text.trim() === '') {
      this.#rendered.replaceChildren(
        el('p', { className: 'empty', textContent: 'Empty markdown cell: double-click to write.' }),
      );
      return;
    }
    showMarkdown(this.#rendered, text, {
      attachments: this.#cell.attachments,
      fileUrl: (path) => this.host.fileUrl(path),
    });
  }

  private drawOutputs(outputs: readonly WireOutput[]): void {
    const keys = outputs.map((output) => JSON.stringify(output));
    if (keys.length === this.#outputKeys.length && keys.every((key, index) => key === this.#outputKeys[index])) return;
    const before = this.#outputNodes;
    this.#outputNodes = outputs.map((output, index) =>
      keys[index] === this.#outputKeys[index]
        ? (before[index] as HTMLElement)
        : renderOutput(output, index, (at, version) => this.host.outputFrameUrl(this.#cell.id, at, version)),
    );
    // A long text output redrawn (a stream growing) stays at its end when the person was there.
    const following = this.#outputNodes.map((node, index) => {
      const old = before[index];
      return old !== undefined && old !== node && old.scrollTop + old.clientHeight >= old.scrollHeight - 4;
    });
    this.#outputKeys = keys;
    syncChildren(this.#outputs, this.#outputNodes);
    this.#outputNodes.forEach((node, index) => {
      if (following[index]) node.scrollTop = node.scrollHeight;
    });
    this.#outputs.hidden = outputs.length === 0;
  }

  private makeButton(
    action: Action,
    iconName: IconName | undefined,
    label: string,
    title: string,
    text = false,
  ): HTMLButtonElement {
    const node = el('button', {
      type: 'button',
      className: `tool ${action}`,
      title,
      attrs: { 'data-action': action, 'aria-label': label || title },
    });
    if (iconName) node.append(icon(iconName));
    if (text && label) node.append(el('span', { textContent: label }));
    // Keeps the caret in the editor: a click on a tool must not end the edit under the pointer.
    node.addEventListener('mousedown', (event) => event.preventDefault());
    node.addEventListener('click', () => void this.act(action));
    this.#buttons.set(action, node);
    return node;
  }

  private button(action: Action): HTMLButtonElement {
    return this.#buttons.get(action) as HTMLButtonElement;
  }

  private show(action: Action, shown: boolean): void {
    this.button(action).hidden = !shown;
  }

  private async act(action: Action): Promise<void> {
    const cell = this.#cell;
    const { order, index } = this.#place;
    switch (action) {
      case 'run':
        await this.runSaved();
        return;
      case 'interrupt':
        await this.host.send({ type: 'interrupt' });
        return;
      case 'edit':
        this.editMarkdown();
        return;
      case 'toggle-type':
        if (!(await this.#sync.flush())) return;
        await this.host.send({
          type: 'update_cell',
          cell_id: cell.id,
          cell_type: cell.cell_type === 'code' ? 'markdown' : 'code',
        });
        return;
      case 'move-up':
        if (index === 0) return;
        await this.host.send({ type: 'move_cell', cell_id: cell.id, after_cell_id: order[index - 2] ?? null });
        return;
      case 'move-down':
        if (index >= order.length - 1) return;
        await this.host.send({ type: 'move_cell', cell_id: cell.id, after_cell_id: order[index + 1] ?? null });
        return;
      case 'add-below':
        await this.host.send({ type: 'insert_cell', source: '', cell_type: 'code', index: index + 1 });
        return;
      case 'delete': {
        // The first click asks (the cell and its outputs go for good), the second deletes.
        const button = this.button('delete');
        if (!button.classList.contains('armed')) {
          button.classList.add('armed');
          button.title = 'Click again to delete the cell';
          this.#deleteTimer = setTimeout(() => {
            button.classList.remove('armed');
            button.title = 'Delete the cell';
          }, 4000);
          return;
        }
        clearTimeout(this.#deleteTimer);
        // Deleting the cell is what the person asks: their text in it goes with it, said nothing of.
        this.#sync.close();
        await this.host.send({ type: 'delete_cell', cell_id: cell.id });
        return;
      }
    }
  }

  private editMarkdown(): void {
    if (this.#cell.cell_type !== 'markdown') return;
    this.#editingMarkdown = true;
    this.draw();
    void this.makeEditor().then((editor) => editor?.focus());
  }

  /** Runs the cell once the person's text is in the room (a run of another text than the one shown would be a lie). */
  private async runSaved(): Promise<void> {
    if (!(await this.#sync.flush())) {
      this.host.notice(
        'Not run: your text in this cell is not saved yet (the cell says why); run it again once it is.',
      );
      return;
    }
    await this.host.send({ type: 'execute_cell', cell_id: this.#cell.id, allow_input: true });
  }

  /** Shift+Enter (`advance`: then to the next cell) or Ctrl/Cmd+Enter (stays): runs code, renders markdown. */
  public async runFromKeyboard(advance: boolean): Promise<void> {
    if (this.#cell.cell_type === 'markdown') {
      this.#editingMarkdown = false;
      this.draw();
      this.#editor?.blur();
      await this.#sync.flush();
    } else if (this.#cell.cell_type === 'code') {
      const run = this.runSaved();
      if (advance) await this.host.focusAfter(this.#cell.id);
      await run;
      return;
    } else await this.#sync.flush();
    if (advance) await this.host.focusAfter(this.#cell.id);
  }

  /** Shows how the person's text stands when it is not simply saved or on its way. */
  private showSyncState(state: SourceSyncState, message?: string): void {
    const said =
      state === 'waiting'
        ? `Not saved yet (${message ?? 'no answer'}): your text is kept here and sent when the daemon answers.`
        : state === 'refused'
          ? `Not saved: ${message ?? 'refused'}`
          : '';
    setText(this.#syncState, said);
    setClass(this.#syncState, `sync-state ${state}`);
    this.#syncState.hidden = said === '';
  }

  /** The caret left the editor: the text goes to the room at once, a markdown cell is rendered again. */
  private left(): void {
    void this.#sync.flush();
    if (this.#editingMarkdown) {
      this.#editingMarkdown = false;
      this.draw();
    }
    this.host.focusChanged(this.#cell.id, false);
  }
}

function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

function setClass(node: HTMLElement, className: string): void {
  if (node.className !== className) node.className = className;
}

function languageOf(cell: SnapshotCell): CellLanguage {
  return cell.cell_type === 'code' ? 'python' : cell.cell_type === 'markdown' ? 'markdown' : 'plain';
}
