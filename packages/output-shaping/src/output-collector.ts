import type { NbformatOutput } from './nbformat-output.js';

/** A display update the kernel sent (`update_display_data`), for whoever shows that display id. */
export interface DisplayUpdate {
  readonly displayId: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/**
 * What one iopub message changed: the output at `index` was added or changed (a merged stream, an
 * updated display; always a new object), the outputs so far were cleared, or a display id was
 * updated (whether or not one of this execution's outputs shows it). A stream merged into the
 * output before it says how in `appended`: the text is its old text's first `keep` characters
 * followed by `text` (so a listener can pass on the change without the whole text).
 */
export type OutputChange =
  | {
      readonly kind: 'output';
      readonly index: number;
      readonly output: NbformatOutput;
      readonly appended?: { readonly keep: number; readonly text: string };
    }
  | { readonly kind: 'cleared' }
  | { readonly kind: 'displayUpdate'; readonly update: DisplayUpdate };

type Content = Readonly<Record<string, unknown>>;

/**
 * Builds the nbformat 4 outputs of one execution from its iopub messages (type and content), as
 * Jupyter front ends do: consecutive `stream` messages of the same name are merged into one output,
 * with carriage returns applied as a terminal shows them (so a progress bar keeps only its last
 * state); `clear_output` clears at once, or with `wait: true` just before the next output;
 * `update_display_data` replaces the data and metadata of every output carrying that display id;
 * `display_data`, `execute_result` and `error` are appended; `execute_input` and other types only
 * note the execution count, if any.
 *
 * Guarantees: an output object handed out (in a change or a snapshot) is never mutated afterwards;
 * a merged stream or an updated display is a new object in the place of the old one. A message
 * costs the size of its own text, however long the stream so far (the text is never searched
 * again; a `\r` or `\b` rewrites only the stream's last line).
 * Does not guarantee: size limits (a chatty execution keeps all its output) or rendering of
 * terminal escapes other than `\r` and `\b`.
 */
export class OutputCollector {
  private outputs: NbformatOutput[] = [];
  private displayIds: (string | undefined)[] = [];
  /** The last output's stream text, when it is a stream: up to its last line, and its last line. */
  private lastStream: { head: string; tail: string } | undefined;
  private clearPending = false;
  private count: number | null = null;

  /** A snapshot of the outputs so far (a new array; later messages do not change it). */
  public snapshot(): NbformatOutput[] {
    return this.outputs.slice();
  }

  /** The outputs so far, not copied: read it before the next message, or copy it. */
  public get current(): readonly NbformatOutput[] {
    return this.outputs;
  }

  /** The execution count seen in `execute_input` or `execute_result`, if any. */
  public get executionCount(): number | null {
    return this.count;
  }

  /** Applies one iopub message; returns the changes in the order they happened (often none or one). */
  public apply(msgType: string, content: Content): OutputChange[] {
    switch (msgType) {
      case 'stream':
        return this.addStream(asString(content.name) ?? 'stdout', asString(content.text) ?? '');
      case 'display_data':
        return this.add(
          { output_type: 'display_data', data: asRecord(content.data), metadata: asRecord(content.metadata) },
          displayIdOf(content),
        );
      case 'execute_result': {
        const executionCount = asCount(content.execution_count);
        if (executionCount !== null) this.count = executionCount;
        return this.add(
          {
            output_type: 'execute_result',
            data: asRecord(content.data),
            metadata: asRecord(content.metadata),
            execution_count: executionCount,
          },
          displayIdOf(content),
        );
      }
      case 'error':
        return this.add(
          {
            output_type: 'error',
            ename: asString(content.ename) ?? '',
            evalue: asString(content.evalue) ?? '',
            traceback: Array.isArray(content.traceback)
              ? content.traceback.filter((line) => typeof line === 'string')
              : [],
          },
          undefined,
        );
      case 'clear_output':
        if (content.wait === true) {
          this.clearPending = true;
          return [];
        }
        return this.clear();
      case 'update_display_data':
        return this.updateDisplay(content);
      case 'execute_input': {
        const executionCount = asCount(content.execution_count);
        if (executionCount !== null) this.count = executionCount;
        return [];
      }
      default:
        return [];
    }
  }

  private addStream(name: string, text: string): OutputChange[] {
    const changes = this.flushPendingClear();
    const lastIndex = this.outputs.length - 1;
    const last = this.outputs[lastIndex];
    const stream = this.lastStream;
    if (stream !== undefined && last !== undefined && last.output_type === 'stream' && last.name === name) {
      const appended = appendStream(stream, text);
      const merged: NbformatOutput = { output_type: 'stream', name, text: stream.head + stream.tail };
      this.outputs[lastIndex] = merged;
      changes.push({ kind: 'output', index: lastIndex, output: merged, appended });
      return changes;
    }
    const started = { head: '', tail: '' };
    appendStream(started, text);
    const output: NbformatOutput = { output_type: 'stream', name, text: started.head + started.tail };
    changes.push(...this.add(output, undefined));
    this.lastStream = started;
    return changes;
  }

  private add(output: NbformatOutput, displayId: string | undefined): OutputChange[] {
    const changes = this.flushPendingClear();
    this.outputs.push(output);
    this.displayIds.push(displayId);
    this.lastStream = undefined;
    changes.push({ kind: 'output', index: this.outputs.length - 1, output });
    return changes;
  }

  private updateDisplay(content: Content): OutputChange[] {
    const displayId = displayIdOf(content);
    if (displayId === undefined) return [];
    const update: DisplayUpdate = { displayId, data: asRecord(content.data), metadata: asRecord(content.metadata) };
    const changes: OutputChange[] = [];
    this.displayIds.forEach((id, index) => {
      const current = this.outputs[index];
      if (id !== displayId || current === undefined) return;
      const updated: NbformatOutput = { ...current, data: update.data, metadata: update.metadata };
      this.outputs[index] = updated;
      changes.push({ kind: 'output', index, output: updated });
    });
    changes.push({ kind: 'displayUpdate', update });
    return changes;
  }

  private flushPendingClear(): OutputChange[] {
    if (!this.clearPending) return [];
    return this.clear();
  }

  private clear(): OutputChange[] {
    this.clearPending = false;
    this.outputs = [];
    this.displayIds = [];
    this.lastStream = undefined;
    return [{ kind: 'cleared' }];
  }
}

/**
 * Appends `chunk` to a stream held as `head` (its text up to and with its last newline, never read
 * again) and `tail` (its last line), applying `\r` and `\b` as a terminal does; says what changed
 * as the text's old first `keep` characters followed by `text`. Only the last line is ever
 * rewritten: a chunk costs its own length (and the last line's, when it has a `\r` or `\b`).
 */
function appendStream(stream: { head: string; tail: string }, chunk: string): { keep: number; text: string } {
  const { head, tail } = stream;
  const rewrites = chunk.includes('\r') || chunk.includes('\b') || tail.endsWith('\r');
  // The common case, a plain line: appended as it came.
  const added = rewrites ? overwriteLine(tail + chunk) : chunk;
  const keep = rewrites ? head.length : head.length + tail.length;
  const lastNewline = added.lastIndexOf('\n');
  if (rewrites) {
    stream.head = head + added.slice(0, lastNewline + 1);
    stream.tail = added.slice(lastNewline + 1);
  } else if (lastNewline >= 0) {
    stream.head = head + tail + added.slice(0, lastNewline + 1);
    stream.tail = added.slice(lastNewline + 1);
  } else stream.tail = tail + added;
  return { keep, text: added };
}

/**
 * Applies carriage returns and backspaces the way a terminal (and Jupyter's front ends) show them:
 * within a line, text after `\r` overwrites the line from its start, and `\b` removes the
 * character before it (never a newline). `\r\n` counts as a newline. A `\r` ending the text is
 * kept, so the next chunk of the stream still overwrites that line.
 */
function overwriteLine(text: string): string {
  if (!text.includes('\r') && !text.includes('\b')) return text;
  const lines = text.replace(/\r+\n/g, '\n').split('\n');
  return lines
    .map((line, index) => {
      if (!line.includes('\r') && !line.includes('\b')) return line;
      const shown: string[] = [];
      let cursor = 0;
      for (const char of line) {
        if (char === '\r') cursor = 0;
        else if (char === '\b') {
          if (cursor > 0) shown.splice(--cursor, 1);
        } else shown[cursor++] = char;
      }
      const text = shown.join('');
      return index === lines.length - 1 && line.endsWith('\r') ? `${text}\r` : text;
    })
    .join('\n');
}

function displayIdOf(content: Content): string | undefined {
  const transient = content.transient;
  if (typeof transient !== 'object' || transient === null) return undefined;
  return asString((transient as Content).display_id);
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function asCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Content) : {};
}
