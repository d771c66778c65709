import {
  defaultOutputLimits,
  type NbformatOutput,
  OutputsDocument,
  type OutputsPage,
  type ReadMoreCall,
} from '@nteract-mcp/output-shaping';
import { ToolError } from './to-tool-failure.js';
import { toolParameters } from './tool-parameters.js';

/** The `images` parameter of every tool that returns outputs. */
export const imagesParameter = toolParameters.optionalBoolean(
  'Send image outputs (PNG, JPEG, GIF, WebP) as image content (default true); false describes them only.',
);

/** `offset`/`length`: read a cell's or an execution's outputs in pages instead of shaped. */
export const pagingParameters = {
  offset: toolParameters.optionalIndex(
    'Read the outputs as one text from this character on, in pages (the cut markers and summaries name offsets); without it the outputs are shown shaped (long texts cut in the middle, many outputs summarized).',
  ),
  length: toolParameters.optionalIndex(
    'Characters of one page with offset (default 80000; a page never exceeds the limit of one tool result, next_offset says where to go on).',
  ),
} as const;

/** The paging call of an execution's outputs. */
export function readExecutionOutputs(executionId: string): ReadMoreCall {
  return (offset) => `get_results(execution_id="${executionId}", offset=${offset})`;
}

/** The paging call of a cell's outputs. */
export function readCellOutputs(cellId: string): ReadMoreCall {
  return (offset) => `get_cell(cell_id="${cellId}", offset=${offset})`;
}

/**
 * The page `offset`… of `outputs` (read as one `OutputsDocument`) that a tool returns: `length`
 * characters (default `defaultOutputLimits.defaultPageChars`) or fewer, so that the page stays
 * within `resultBudgetBytes` with room for the rest of the result. An offset past the end is a
 * tool error naming the length.
 */
export function pageOfOutputs(
  outputs: readonly NbformatOutput[],
  offset: number,
  length: number | undefined,
  resultBudgetBytes: number,
): OutputsPage {
  const document = new OutputsDocument(outputs);
  const pageBudget = Math.floor(resultBudgetBytes * 0.95) - 64 * 1024;
  const page = document.page(offset, length ?? defaultOutputLimits.defaultPageChars, pageBudget);
  if (page === undefined) {
    const total = document.text.length;
    throw new ToolError(
      `offset ${offset} is past the end of the outputs (${total} characters); give an offset from 0 to ${total}.`,
    );
  }
  return page;
}
