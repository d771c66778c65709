import {
  defaultOutputLimits,
  type NbformatOutput,
  OutputsDocument,
  type OutputsPage,
} from '@nteract-mcp/output-shaping';
import type { ExecutionPage, OutputsPageRequest } from '../../ports/notebook-handle.js';
import { ToolError } from './to-tool-failure.js';

/**
 * The page a tool asks for: `length` characters (default `defaultOutputLimits.defaultPageChars`)
 * from `offset`, within `resultBudgetBytes` with room for the rest of the result.
 */
export function outputsPageRequest(
  offset: number,
  length: number | undefined,
  resultBudgetBytes: number,
): OutputsPageRequest {
  return {
    offset,
    length: length ?? defaultOutputLimits.defaultPageChars,
    budgetBytes: Math.floor(resultBudgetBytes * 0.95) - 64 * 1024,
  };
}

/** The page of a backend's {@link ExecutionPage}; an offset past the end is a tool error naming the length. */
export function pageOfExecution(read: ExecutionPage): OutputsPage {
  if (read.page.offset > read.page.total_chars) throw pastTheEnd(read.page.offset, read.page.total_chars);
  return read.page;
}

function pastTheEnd(offset: number, total: number): ToolError {
  return new ToolError(
    `offset ${offset} is past the end of the outputs (${total} characters); give an offset from 0 to ${total}.`,
  );
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
  const asked = outputsPageRequest(offset, length, resultBudgetBytes);
  const page = document.page(asked.offset, asked.length, asked.budgetBytes);
  if (page === undefined) throw pastTheEnd(offset, document.text.length);
  return page;
}
