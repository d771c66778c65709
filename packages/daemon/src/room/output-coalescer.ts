import type { Clock, Timer } from '@nteract-mcp/foundation';
import type { OutputEdit } from '@nteract-mcp/runtimed-protocol';
import type { ExecutionOutputChange } from '../kernel/jupyter-kernel.js';

/**
 * How long output changes of one execution are gathered into one publication, at most: a cell
 * printing thousands of lines a second is told to peers at most this often (as Jupyter's front
 * ends render), while a lone print after a quiet spell goes out at once.
 */
export const outputWindowMs = 25;

/**
 * Gathers one running execution's output changes and hands them on as few, small edits: at once
 * when nothing was handed on within the last window, else at the window's end (and at once on
 * {@link OutputCoalescer.flush}, before the execution's end is told). Consecutive appends to one
 * stream become one append; a display set twice is set once; a clear drops what it clears.
 *
 * Guarantees: applying the edits handed on, in order, to the outputs as last handed on gives the
 * outputs as they are at the hand-on; an edit costs the size of its change, not of the outputs.
 */
export class OutputCoalescer {
  #pending: OutputEdit[] = [];
  #timer: Timer | undefined;
  #lastPublished = Number.NEGATIVE_INFINITY;

  public constructor(
    private readonly clock: Clock,
    /** Called with the gathered edits (never empty). */
    private readonly publish: (edits: OutputEdit[]) => void,
    private readonly windowMs = outputWindowMs,
  ) {}

  public add(change: ExecutionOutputChange): void {
    this.merge(toEdit(change));
    if (this.#timer !== undefined) return;
    const wait = this.#lastPublished + this.windowMs - this.clock.now();
    if (wait <= 0) this.flush();
    else this.#timer = this.clock.setTimer(wait, () => this.flush());
  }

  /** Hands on what is gathered now. */
  public flush(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#pending.length === 0) return;
    const edits = this.#pending;
    this.#pending = [];
    this.#lastPublished = this.clock.now();
    this.publish(edits);
  }

  /** Drops what is gathered (the execution is gone) and stops the timer. */
  public dispose(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#pending = [];
  }

  private merge(edit: OutputEdit): void {
    const last = this.#pending.at(-1);
    if (edit.kind === 'clear') {
      this.#pending = [edit];
      return;
    }
    if (last?.kind === 'append' && edit.kind === 'append' && last.index === edit.index) {
      // The new text follows what is pending, starts within it, or rewrites from before it.
      const end = last.keep + last.text.length;
      let text = edit.text;
      if (edit.keep === end) text = last.text + edit.text;
      else if (edit.keep > last.keep) text = last.text.slice(0, edit.keep - last.keep) + edit.text;
      this.#pending[this.#pending.length - 1] = { ...last, keep: Math.min(last.keep, edit.keep), text };
      return;
    }
    if (last?.kind === 'set' && edit.kind === 'append' && last.index === edit.index) {
      // A stream begun in this window: set once, with what was appended since.
      const text = typeof last.output.text === 'string' ? last.output.text : '';
      const kept = edit.keep === text.length ? text : text.slice(0, edit.keep);
      this.#pending[this.#pending.length - 1] = { ...last, output: { ...last.output, text: kept + edit.text } };
      return;
    }
    if (last?.kind === 'set' && edit.kind === 'set' && last.index === edit.index) {
      this.#pending[this.#pending.length - 1] = edit;
      return;
    }
    this.#pending.push(edit);
  }
}

function toEdit(change: ExecutionOutputChange): OutputEdit {
  if (change.kind === 'cleared') return { kind: 'clear' };
  if (change.appended !== undefined)
    return { kind: 'append', index: change.index, keep: change.appended.keep, text: change.appended.text };
  return { kind: 'set', index: change.index, output: change.output };
}
