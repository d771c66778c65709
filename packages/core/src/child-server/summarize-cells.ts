import { describeMiB } from '../handoff/mcp-message-limits.js';
import type { CellOutput, NotebookCell } from '../ports/notebook-handle.js';

/** Characters of one output's text shown unless `full_output` is asked for. */
export const outputPreviewLimit = 4000;

/** Characters of a cell's source shown per line of a summary, by default. */
export const defaultSummaryPreviewChars = 80;

/** One output as a tool shows it: its kind and readable text, with the long parts cut unless `full`. */
export interface RenderedOutput {
  readonly output_type: string;
  readonly name?: string;
  readonly text?: string;
  readonly mime_types?: readonly string[];
  readonly ename?: string;
  readonly evalue?: string;
  readonly traceback?: string;
}

/** A cell as the JSON-returning tools show it. */
export interface RenderedCell {
  readonly cell_id: string;
  readonly index?: number;
  readonly cell_type: string;
  readonly source: string;
  readonly execution_count: number | null;
  readonly outputs?: readonly RenderedOutput[];
}

const ansiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/**
 * One line per cell: `[index] id type (exec n, k outputs): first line of source…`. `previewChars`
 * bounds the source shown; `start`/`count` select a window (indices stay those of the notebook).
 */
export function summarizeCells(
  cells: readonly NotebookCell[],
  options: { readonly start?: number; readonly count?: number; readonly previewChars?: number } = {},
): string {
  if (cells.length === 0) return '(empty notebook: no cells)';
  const start = Math.max(0, options.start ?? 0);
  const end = options.count === undefined ? cells.length : Math.min(cells.length, start + Math.max(0, options.count));
  const previewChars = Math.max(0, options.previewChars ?? defaultSummaryPreviewChars);
  const lines: string[] = [];
  for (let index = start; index < end; index += 1) {
    const cell = cells[index] as NotebookCell;
    const facts: string[] = [];
    if (cell.cellType === 'code') {
      if (cell.executionCount !== null) facts.push(`exec ${cell.executionCount}`);
      if (cell.outputs.length > 0) facts.push(`${cell.outputs.length} output${cell.outputs.length === 1 ? '' : 's'}`);
      if (cell.outputs.some((output) => output.output_type === 'error')) facts.push('error');
    }
    const firstLine = cell.source.split('\n', 1)[0] ?? '';
    const multiline = cell.source.includes('\n');
    let preview = firstLine.length > previewChars ? `${firstLine.slice(0, previewChars)}…` : firstLine;
    if (multiline && preview === firstLine) preview = `${preview} …`;
    const details = facts.length > 0 ? ` (${facts.join(', ')})` : '';
    lines.push(`[${index}] ${cell.id} ${cell.cellType}${details}: ${preview}`);
  }
  if (lines.length === 0) return `(no cells in this range; the notebook has ${cells.length})`;
  if (start > 0 || end < cells.length) lines.push(`(cells ${start}–${end - 1} of ${cells.length})`);
  return lines.join('\n');
}

/** A cell for JSON output; outputs only when asked. */
export function renderCell(
  cell: NotebookCell,
  options: { readonly index?: number; readonly includeOutputs: boolean; readonly fullOutput: boolean },
): RenderedCell {
  return {
    cell_id: cell.id,
    ...(options.index !== undefined ? { index: options.index } : {}),
    cell_type: cell.cellType,
    source: cell.source,
    execution_count: cell.executionCount,
    ...(options.includeOutputs ? { outputs: renderOutputs(cell.outputs, options.fullOutput) } : {}),
  };
}

/** Outputs as readable text: streams, `text/plain` of rich outputs (other types named), errors without ANSI colours. */
export function renderOutputs(outputs: readonly CellOutput[], fullOutput: boolean): RenderedOutput[] {
  return outputs.map((output) => renderOutput(output, fullOutput));
}

/** Every cell with its source and outputs, as text for reading (the `rich` format). */
export function renderCellsRich(
  cells: readonly NotebookCell[],
  options: {
    readonly start?: number;
    readonly count?: number;
    readonly includeOutputs: boolean;
    readonly fullOutput: boolean;
    /**
     * When set, the blocks stop before the text (as escaped JSON) would pass it, and a last line
     * says which cells were left out and how to read them (at least one cell is always shown).
     */
    readonly budgetBytes?: number;
  },
): string {
  const start = Math.max(0, options.start ?? 0);
  const end = options.count === undefined ? cells.length : Math.min(cells.length, start + Math.max(0, options.count));
  const blocks: string[] = [];
  const budget = options.budgetBytes === undefined ? undefined : options.budgetBytes * 0.97 - 4096;
  let used = 0;
  for (let index = start; index < end; index += 1) {
    const cell = cells[index] as NotebookCell;
    const count = cell.cellType === 'code' ? ` [${cell.executionCount ?? ' '}]` : '';
    const parts = [`── [${index}] ${cell.id} ${cell.cellType}${count}`, cell.source];
    if (options.includeOutputs && cell.outputs.length > 0) {
      parts.push('── outputs');
      for (const output of renderOutputs(cell.outputs, options.fullOutput)) parts.push(outputText(output));
    }
    const block = parts.join('\n');
    used += Buffer.byteLength(JSON.stringify(block)) + 4;
    if (budget !== undefined && used > budget && blocks.length > 0) {
      blocks.push(
        `── … cells ${index}–${end - 1} are not shown: one tool result is limited to ${describeMiB(options.budgetBytes as number)}. Read them with get_all_cells(format="rich", start=${index}), or one at a time with get_cell(cell_id=...).`,
      );
      break;
    }
    blocks.push(block);
  }
  return blocks.length > 0 ? blocks.join('\n\n') : '(no cells)';
}

function renderOutput(output: CellOutput, fullOutput: boolean): RenderedOutput {
  const cut = (text: string): string => (fullOutput ? text : truncate(text));
  switch (output.output_type) {
    case 'stream':
      return {
        output_type: 'stream',
        name: typeof output.name === 'string' ? output.name : 'stdout',
        text: cut(multiline(output.text)),
      };
    case 'execute_result':
    case 'display_data': {
      const data = (typeof output.data === 'object' && output.data !== null ? output.data : {}) as Record<
        string,
        unknown
      >;
      const others = Object.keys(data).filter((mime) => mime !== 'text/plain');
      return {
        output_type: output.output_type,
        text: cut(multiline(data['text/plain'])),
        ...(others.length > 0 ? { mime_types: others } : {}),
      };
    }
    case 'error': {
      const traceback = Array.isArray(output.traceback) ? output.traceback.map(String).join('\n') : '';
      return {
        output_type: 'error',
        ename: String(output.ename ?? ''),
        evalue: String(output.evalue ?? ''),
        traceback: cut(traceback.replace(ansiEscape, '')),
      };
    }
    default:
      return { output_type: output.output_type };
  }
}

function outputText(output: RenderedOutput): string {
  if (output.output_type === 'error') return `${output.ename}: ${output.evalue}\n${output.traceback ?? ''}`.trimEnd();
  const mimes = output.mime_types?.length ? ` [${output.mime_types.join(', ')}]` : '';
  return `${output.text ?? ''}${mimes}`;
}

function multiline(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join('');
  return typeof value === 'string' ? value : '';
}

function truncate(text: string): string {
  if (text.length <= outputPreviewLimit) return text;
  return `${text.slice(0, outputPreviewLimit)}\n… [${text.length - outputPreviewLimit} more characters; pass full_output=true to see everything]`;
}
