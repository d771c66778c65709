import type { ClientExtension } from '@nteract-mcp/core';

type ShownCall = Parameters<ClientExtension['structuredContent']>[0];

/** One nbformat output as the view gets it (texts and images capped; `omitted` stands for one left out). */
export type ViewOutput = Readonly<Record<string, unknown>> & { readonly output_type: string };

/** One cell a tool touched, as the view shows it. */
export interface ViewCell {
  readonly id: string;
  readonly cellType: string;
  readonly source: string;
  readonly executionCount: number | null;
  /** How its run in this call stands (`done`, `error`, `running`, …), when the call ran it. */
  readonly status?: string;
  readonly outputs: readonly ViewOutput[];
  /** Outputs not sent (over the view's bounds); `get_cell` with `offset` pages them in. */
  readonly omittedOutputs: number;
}

/** The `structuredContent` the view renders. */
export interface ViewContent {
  readonly view: 'nteract-cells';
  readonly notebookId?: string;
  /**
   * That a person can watch the notebook live, as its backend says it (never the address: the
   * view asks `show_notebook` for one when the person clicks, and opens it through the host).
   */
  readonly liveView?: string;
  readonly cells: readonly ViewCell[];
  /** Outputs of a run that made no cell (`run_code`), from the result's content. */
  readonly scratch?: { readonly status?: string; readonly outputs: readonly ViewOutput[] };
  /** The tool's error text, when the call failed. */
  readonly error?: string;
}

/** At most this many cells are shown (a run of a whole notebook shows its first ones). */
const maxCells = 40;
/** Outputs per cell, and for a call that pages them (`offset`). */
const maxOutputs = 30;
const maxFullOutputs = 300;
/** Characters of one text kept. */
const maxTextChars = 20_000;
/** Bytes of base64 of all images of one answer; the rest are omitted. */
const imageBudgetChars = 4 * 1024 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first text item of a result, parsed as JSON when it is. */
function resultJson(result: Readonly<Record<string, unknown>>): { readonly text?: string; readonly json?: unknown } {
  const content = Array.isArray(result.content) ? result.content : [];
  const first = content.find((item) => isRecord(item) && item.type === 'text' && typeof item.text === 'string') as
    | { text: string }
    | undefined;
  if (first === undefined) return {};
  try {
    return { text: first.text, json: JSON.parse(first.text) as unknown };
  } catch {
    return { text: first.text };
  }
}

/** Every `cell_id` a result names (in any object, at any depth), with the `status` beside it, in order. */
function namedCells(
  value: unknown,
  found = new Map<string, string | undefined>(),
  depth = 0,
): Map<string, string | undefined> {
  if (depth > 6) return found;
  if (Array.isArray(value)) {
    for (const item of value) namedCells(item, found, depth + 1);
    return found;
  }
  if (!isRecord(value)) return found;
  if (typeof value.cell_id === 'string' && !found.has(value.cell_id)) {
    found.set(value.cell_id, typeof value.status === 'string' ? value.status : undefined);
  }
  for (const member of Object.values(value)) if (typeof member === 'object') namedCells(member, found, depth + 1);
  return found;
}

/** Bounds one output for the view: long texts cut, images within what is left of `budget`. */
function boundedOutput(output: Readonly<Record<string, unknown>>, budget: { chars: number }): ViewOutput {
  const cut = (text: unknown): unknown => {
    const joined = Array.isArray(text) ? text.join('') : text;
    return typeof joined === 'string' && joined.length > maxTextChars
      ? `${joined.slice(0, maxTextChars)}\n… (${joined.length - maxTextChars} more characters)`
      : joined;
  };
  const type = typeof output.output_type === 'string' ? output.output_type : 'unknown';
  if (type === 'stream') return { output_type: type, name: output.name, text: cut(output.text) };
  if (type === 'error') {
    const traceback = Array.isArray(output.traceback) ? output.traceback.slice(-40).map(cut) : [];
    return { output_type: type, ename: output.ename, evalue: cut(output.evalue), traceback };
  }
  if (!isRecord(output.data)) return { output_type: type };
  const data: Record<string, unknown> = {};
  for (const [mime, value] of Object.entries(output.data)) {
    if (mime.startsWith('image/') && mime !== 'image/svg+xml') {
      // An image is sent whole or not at all (a cut one would not decode).
      const text = Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
      if (text.length === 0 || text.length > budget.chars) continue;
      budget.chars -= text.length;
      data[mime] = text;
    } else if (typeof value === 'string' || Array.isArray(value)) data[mime] = cut(value);
    else if (mime.endsWith('json')) data[mime] = cut(JSON.stringify(value));
  }
  if (Object.keys(data).length === 0) return { output_type: 'omitted', reason: 'too large for the view' };
  return { output_type: type, data };
}

/** The result's own content blocks as outputs (a run that made no cell): its images and what its JSON lists. */
function scratchOutputs(
  result: Readonly<Record<string, unknown>>,
  json: unknown,
  budget: { chars: number },
): ViewOutput[] {
  const outputs: ViewOutput[] = [];
  const listed = isRecord(json) && Array.isArray(json.outputs) ? json.outputs : [];
  for (const item of listed) {
    const text =
      typeof item === 'string' ? item : isRecord(item) && typeof item.text === 'string' ? item.text : undefined;
    outputs.push(
      boundedOutput({ output_type: 'stream', name: 'stdout', text: text ?? JSON.stringify(item, null, 1) }, budget),
    );
  }
  for (const item of Array.isArray(result.content) ? result.content : []) {
    if (isRecord(item) && item.type === 'image' && typeof item.data === 'string' && typeof item.mimeType === 'string') {
      outputs.push(boundedOutput({ output_type: 'display_data', data: { [item.mimeType]: item.data } }, budget));
    }
  }
  return outputs;
}

/**
 * What the view shows of one answered call: the cells the result names (read again from the
 * notebook, with all their outputs, bounded), the status the result gives each, the live page,
 * or the outputs of a run that made no cell; the error text of a failed call.
 * `undefined` when there is nothing to show.
 */
export async function viewContentOf(call: ShownCall): Promise<ViewContent | undefined> {
  const { text, json } = resultJson(call.result);
  const handle = call.handle;
  const liveView = await call.liveView();
  const base = {
    view: 'nteract-cells' as const,
    ...(handle === undefined ? {} : { notebookId: handle.notebookId }),
    ...(liveView === undefined ? {} : { liveView }),
  };
  if (call.result.isError === true) return { ...base, cells: [], error: text ?? 'The call failed.' };
  const named = namedCells(json);
  const argued = call.arguments.cell_id;
  if (typeof argued === 'string' && !named.has(argued)) named.set(argued, undefined);
  const budget = { chars: imageBudgetChars };
  const status = isRecord(json) && typeof json.status === 'string' ? json.status : undefined;
  if (named.size === 0) {
    const outputs = scratchOutputs(call.result, json, budget);
    if (outputs.length === 0 && status === undefined) return undefined;
    return { ...base, cells: [], scratch: { ...(status === undefined ? {} : { status }), outputs } };
  }
  if (handle === undefined) return undefined;
  // A call that pages the outputs (`offset`: the view's "show more", get_cell's paging) gets more of them.
  const limit = typeof call.arguments.offset === 'number' ? maxFullOutputs : maxOutputs;
  const ids = [...named.keys()].slice(0, maxCells);
  const cells = await Promise.all(
    ids.map((id) =>
      handle.getCell(id).then(
        (cell): ViewCell => {
          const own = named.get(id) ?? (named.size === 1 ? status : undefined);
          return {
            id: cell.id,
            cellType: cell.cellType,
            source: cell.source.length > maxTextChars ? `${cell.source.slice(0, maxTextChars)}\n…` : cell.source,
            executionCount: cell.executionCount,
            ...(own === undefined ? {} : { status: own }),
            outputs: cell.outputs.slice(0, limit).map((output) => boundedOutput(output, budget)),
            omittedOutputs: Math.max(0, cell.outputs.length - limit),
          };
        },
        () => undefined,
      ),
    ),
  );
  return { ...base, cells: cells.filter((cell) => cell !== undefined) };
}
