import { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { indentWithTab } from '@codemirror/commands';
import { markdownKeymap, markdownLanguage } from '@codemirror/lang-markdown';
import { python } from '@codemirror/lang-python';
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  indentUnit,
  LanguageSupport,
  syntaxHighlighting,
} from '@codemirror/language';
import { Annotation, Compartment, EditorState, type Extension, Prec, StateEffect, StateField } from '@codemirror/state';
import { Decoration, type DecorationSet, EditorView, keymap, placeholder, WidgetType } from '@codemirror/view';
import { classHighlighter, tags } from '@lezer/highlight';
import { minimalSetup } from 'codemirror';
import { mergeSource } from './merge-source.js';
import { labelKind } from './peer-chip.js';

/** The language a cell's editor highlights. */
export type CellLanguage = 'python' | 'markdown' | 'plain';

/** What a cell's editor tells its cell. */
export interface CellEditorHandlers {
  /** The person changed the text (not another peer's change put in by {@link CellEditor.merge}). */
  readonly onEdit: () => void;
  readonly onFocus: () => void;
  readonly onBlur: () => void;
  /** Shift+Enter (`advance`: then on to the next cell) or Ctrl/Cmd+Enter (stays). */
  readonly onRun: (advance: boolean) => void;
  /** Escape: the person leaves the text for the notebook's command keys. */
  readonly onEscape: () => void;
}

/** Marks the transactions that put another peer's text into the editor. */
const remoteChange = Annotation.define<boolean>();

/** How long another peer's mark stays where its last change ended. */
const peerMarkMs = 4000;

/** Where another peer's last change ended, and its label (`null`: no mark). */
const setPeerMark = StateEffect.define<{ readonly at: number; readonly label: string } | null>();

/** Another peer's caret: a bar where its change ended, with its label. */
class PeerMarkWidget extends WidgetType {
  public constructor(private readonly label: string) {
    super();
  }

  public override eq(other: PeerMarkWidget): boolean {
    return other.label === this.label;
  }

  public override toDOM(): HTMLElement {
    // The label is drawn by CSS from the attribute: no text of it in the document (the cell's text, find, copy).
    const mark = document.createElement('span');
    mark.className = `cm-peer-mark ${labelKind(this.label)}`;
    mark.dataset.label = this.label;
    mark.setAttribute('aria-label', `${this.label} edited here`);
    return mark;
  }

  public override ignoreEvent(): boolean {
    return true;
  }
}

/** The other peer's mark, moved along with every change of the text. */
const peerMark = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = marks.map(transaction.changes);
    for (const effect of transaction.effects) {
      if (!effect.is(setPeerMark)) continue;
      next = effect.value
        ? Decoration.set([
            Decoration.widget({ widget: new PeerMarkWidget(effect.value.label), side: 1 }).range(effect.value.at),
          ])
        : Decoration.none;
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/** The colours of a Jupyter front end's light theme, by highlighting tag. */
const notebookHighlightStyle = HighlightStyle.define([
  { tag: tags.keyword, color: '#008000', fontWeight: '600' },
  { tag: [tags.controlKeyword, tags.moduleKeyword, tags.definitionKeyword], color: '#008000', fontWeight: '600' },
  { tag: [tags.operatorKeyword, tags.operator], color: '#aa22ff' },
  { tag: [tags.string, tags.special(tags.string)], color: '#ba2121' },
  { tag: [tags.number, tags.bool, tags.null], color: '#008800' },
  { tag: tags.comment, color: '#3d7b7b', fontStyle: 'italic' },
  { tag: [tags.function(tags.definition(tags.variableName)), tags.definition(tags.className)], color: '#0000ff' },
  { tag: tags.className, color: '#0000ff', fontWeight: '600' },
  { tag: [tags.standard(tags.variableName), tags.self], color: '#008000' },
  { tag: tags.meta, color: '#aa22ff' },
  { tag: tags.heading, color: '#0a58ca', fontWeight: '700' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strong, fontWeight: '700' },
  { tag: tags.link, color: '#0a58ca', textDecoration: 'underline' },
  { tag: [tags.monospace, tags.processingInstruction], color: '#7a3e9d' },
  { tag: tags.invalid, color: '#d11' },
]);

/** Editor layout (CodeMirror puts it in a constructable stylesheet: nothing inline for the CSP). */
const notebookTheme = EditorView.theme({
  '&': { fontSize: '13.5px', backgroundColor: 'transparent' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace',
    lineHeight: '1.5',
  },
  '.cm-content': { padding: '8px 0', caretColor: '#1f2328' },
  '.cm-line': { padding: '0 10px' },
  '.cm-placeholder': { color: '#8b949e' },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: '#d7e8ff', outline: '1px solid #9ec5ff' },
});

/**
 * Typing over a selection that spans lines. Chromium (156) leaves an empty line behind when a
 * key replaces such a selection in the editable DOM, and CodeMirror reads that line into the
 * text (select all, type: the cell ends with a newline it never had). This makes the replacement
 * itself, through the editor's input handlers (closed brackets and the like apply as for any typing).
 */
const typeOverLines = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== 'insertText' || event.data === null || event.isComposing) return false;
    const { from, to } = view.state.selection.main;
    if (from === to || view.state.doc.lineAt(from).number === view.state.doc.lineAt(to).number) return false;
    const text = event.data;
    event.preventDefault();
    const insert = () =>
      view.state.update(view.state.replaceSelection(text), { userEvent: 'input.type', scrollIntoView: true });
    if (!view.state.facet(EditorView.inputHandler).some((handler) => handler(view, from, to, text, insert))) {
      view.dispatch(insert());
    }
    return true;
  },
});

/** The language's highlighting (and keys), and what an empty editor says. */
function languageSupport(language: CellLanguage): Extension {
  if (language === 'python') return [python(), placeholder('Python code')];
  // GFM markdown without `markdown()`'s HTML support (which would bring CodeMirror's HTML, CSS and
  // JavaScript modes into the bundle for HTML inside markdown).
  if (language === 'markdown') {
    return [new LanguageSupport(markdownLanguage), keymap.of(markdownKeymap), placeholder('Markdown, $math$ too')];
  }
  return placeholder('Raw text');
}

/**
 * A cell's source as a CodeMirror editor: highlighting for Python or markdown (and `tok-*` classes
 * on the tokens), brackets closed and matched, Tab indents; another peer's text comes in through
 * {@link CellEditor.merge}, at the character level, the person's own changes and caret kept, with
 * that peer's mark where its change ended.
 */
export class CellEditor {
  readonly #view: EditorView;
  readonly #language = new Compartment();
  #current: CellLanguage;
  #markTimer: ReturnType<typeof setTimeout> | undefined;

  public constructor(parent: HTMLElement, text: string, language: CellLanguage, handlers: CellEditorHandlers) {
    this.#current = language;
    const run = (advance: boolean) => (): boolean => {
      handlers.onRun(advance);
      return true;
    };
    this.#view = new EditorView({
      parent,
      state: EditorState.create({
        doc: text,
        extensions: [
          Prec.highest(
            keymap.of([
              { key: 'Shift-Enter', run: run(true) },
              { key: 'Mod-Enter', run: run(false) },
              {
                key: 'Escape',
                run: () => {
                  handlers.onEscape();
                  return true;
                },
              },
            ]),
          ),
          minimalSetup,
          typeOverLines,
          indentUnit.of('    '),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          keymap.of([...closeBracketsKeymap, indentWithTab]),
          syntaxHighlighting(notebookHighlightStyle),
          syntaxHighlighting(classHighlighter),
          notebookTheme,
          EditorView.lineWrapping,
          this.#language.of(languageSupport(language)),
          peerMark,
          EditorView.updateListener.of((update) => {
            if (update.docChanged && !update.transactions.some((tr) => tr.annotation(remoteChange))) handlers.onEdit();
            if (update.focusChanged) (update.view.hasFocus ? handlers.onFocus : handlers.onBlur)();
          }),
        ],
      }),
    });
  }

  public get text(): string {
    return this.#view.state.doc.toString();
  }

  public get hasFocus(): boolean {
    return this.#view.hasFocus;
  }

  public focus(): void {
    this.#view.focus();
  }

  /** Focuses the editor with the caret at the text nearest the point (`clientX`, `clientY`). */
  public focusAt(x: number, y: number): void {
    const at = this.#view.posAtCoords({ x, y });
    this.#view.focus();
    if (at !== null) this.#view.dispatch({ selection: { anchor: at } });
  }

  public blur(): void {
    this.#view.contentDOM.blur();
  }

  public setLanguage(language: CellLanguage): void {
    if (language === this.#current) return;
    this.#current = language;
    this.#view.dispatch({ effects: this.#language.reconfigure(languageSupport(language)) });
  }

  /**
   * Puts the room's `remote` text in over `base` (the room's text the editor's changes were made
   * over), keeping the person's changes and caret (see {@link mergeSource}); `by`, the peer that
   * made it, is marked where its change ended for a few seconds.
   */
  public merge(base: string, remote: string, by?: string): void {
    const { changes, changedTo } = mergeSource(base, this.text, remote);
    if (changes.empty) return;
    const mark = by !== undefined && changedTo !== undefined;
    this.#view.dispatch({
      changes,
      annotations: remoteChange.of(true),
      ...(mark ? { effects: setPeerMark.of({ at: changedTo, label: by }) } : {}),
    });
    if (!mark) return;
    clearTimeout(this.#markTimer);
    this.#markTimer = setTimeout(() => this.#view.dispatch({ effects: setPeerMark.of(null) }), peerMarkMs);
  }

  public destroy(): void {
    clearTimeout(this.#markTimer);
    this.#view.destroy();
  }
}
