import type { ReadMoreCall } from '@nteract-mcp/output-shaping';
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
