import type { ResultShaper, ShapedOutput } from '@nteract-mcp/output-shaping';
import { describeMiB } from '../../handoff/mcp-message-limits.js';
import type { NotebookCell } from '../../ports/notebook-handle.js';
import { readCellOutputs } from './output-parameters.js';
import { escapedBytes } from './tool-result-budget.js';

/** Characters of a cell's source shown per line of a summary, by default. */
export const defaultSummaryPreviewChars = 80;

/** Lines of a summary when no `count` is given: a large notebook's list stays readable and bounded. */
export const defaultSummaryCells = 500;

/**
 * Bytes (as escaped JSON text) of the cells one `get_all_cells` or `connect_notebook` answer lists
 * when no `count` is given, in every format: a default answer stays near this whatever the
 * notebook's size (at least one cell is always listed), and names the `start` of the next.
 */
export const defaultCellsAnswerBytes = 48 * 1024;

/** Why a default answer stops where it does, for its last line. */
export const defaultCellsAnswerReason = `without count, one answer lists about ${defaultCellsAnswerBytes / 1024} KiB of cells (give count for more at once)`;

/** A cell as the JSON-returning tools show it. */
export interface RenderedCell {
  readonly cell_id: string;
  readonly index?: number;
  readonly cell_type: string;
  readonly source: string;
  readonly execution_count: number | null;
  /** The version of its content (give it as expected_version to write only over what was read). */
  readonly version?: string;
  /** Who last inserted the cell or changed its source, when known (a peer label). */
  readonly edited_by?: string;
  readonly outputs?: readonly ShapedOutput[];
}

/**
 * One line per cell: `[index] id type (exec n, k outputs): first line of source…`. `previewChars`
 * bounds the source shown; `start`/`count` select a window (indices stay those of the notebook).
 * Without `count`, at most `limit` lines (default {@link defaultSummaryCells}) and about
 * {@link defaultCellsAnswerBytes} (at least one line); the last line then says which
 * `get_all_cells` call lists the next ones.
 */
export function summarizeCells(
  cells: readonly NotebookCell[],
  options: {
    readonly start?: number;
    readonly count?: number;
    readonly previewChars?: number;
    readonly limit?: number;
  } = {},
): string {
  if (cells.length === 0) return '(empty notebook: no cells)';
  const start = Math.max(0, options.start ?? 0);
  const count = options.count ?? options.limit ?? defaultSummaryCells;
  let end = Math.min(cells.length, start + Math.max(0, count));
  const previewChars = Math.max(0, options.previewChars ?? defaultSummaryPreviewChars);
  const lines: string[] = [];
  let used = 0;
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
    const line = `[${index}] ${cell.id} ${cell.cellType}${details}: ${preview}`;
    used += escapedBytes(line);
    if (options.count === undefined && lines.length > 0 && used > defaultCellsAnswerBytes) {
      end = index;
      break;
    }
    lines.push(line);
  }
  if (lines.length === 0) return `(no cells in this range; the notebook has ${cells.length})`;
  if (options.count === undefined && end < cells.length) {
    lines.push(`(cells ${start}–${end - 1} of ${cells.length}: get_all_cells(start=${end}) lists the next)`);
  } else if (start > 0 || end < cells.length) {
    lines.push(`(cells ${start}–${end - 1} of ${cells.length})`);
  }
  return lines.join('\n');
}

/**
 * A cell for JSON output; outputs only when asked, shaped by `shaper` (cut markers and summaries
 * name `get_cell(cell_id=…, offset=…)`).
 */
export function renderCell(
  cell: NotebookCell,
  options: { readonly index?: number; readonly includeOutputs: boolean; readonly shaper: ResultShaper },
): RenderedCell {
  return {
    cell_id: cell.id,
    ...(options.index !== undefined ? { index: options.index } : {}),
    cell_type: cell.cellType,
    source: cell.source,
    execution_count: cell.executionCount,
    ...(cell.version === undefined ? {} : { version: cell.version }),
    ...(cell.editedBy === undefined ? {} : { edited_by: cell.editedBy }),
    ...(options.includeOutputs ? { outputs: options.shaper.shapeOutputs(cell.outputs, readCellOutputs(cell.id)) } : {}),
  };
}

/** Every cell with its source and outputs, as text for reading (the `rich` format). */
export function renderCellsRich(
  cells: readonly NotebookCell[],
  options: {
    readonly start?: number;
    readonly count?: number;
    readonly includeOutputs: boolean;
    readonly shaper: ResultShaper;
    /**
     * When set, the blocks stop before the text (as escaped JSON) would pass it, and a last line
     * says which cells were left out and how to read them (at least one cell is always shown).
     */
    readonly budgetBytes?: number;
    /** Why the blocks stop at `budgetBytes`, for that last line (default: the limit of one tool result). */
    readonly budgetReason?: string;
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
      for (const output of options.shaper.shapeOutputs(cell.outputs, readCellOutputs(cell.id))) {
        parts.push(outputText(output));
      }
    }
    const block = parts.join('\n');
    used += Buffer.byteLength(JSON.stringify(block)) + 4;
    if (budget !== undefined && used + options.shaper.imageBytes > budget && blocks.length > 0) {
      blocks.push(
        `── … cells ${index}–${end - 1} are not shown: ${options.budgetReason ?? `one tool result is limited to ${describeMiB(options.budgetBytes as number)}`}. Read them with get_all_cells(format="rich", start=${index}), or one at a time with get_cell(cell_id=...).`,
      );
      break;
    }
    blocks.push(block);
  }
  return blocks.length > 0 ? blocks.join('\n\n') : '(no cells)';
}

/** One shaped output as lines of the `rich` text. */
function outputText(output: ShapedOutput): string {
  if (output.output_type === 'error') return `${output.ename}: ${output.evalue}\n${output.traceback ?? ''}`.trimEnd();
  if (output.output_type === 'omitted') return `… ${output.summary ?? ''}`;
  const image = output.image;
  const imageLine =
    image === undefined
      ? ''
      : `\n[${image.mime_type}${image.width && image.height ? ` ${image.width}×${image.height}` : ''}: ${image.content_index === undefined ? (image.not_shown ?? 'not shown') : `image content item ${image.content_index}`}]`;
  const others = output.other_mime_types?.length ? ` [also ${output.other_mime_types.join(', ')}]` : '';
  return `${output.text ?? ''}${others}${imageLine}`;
}
