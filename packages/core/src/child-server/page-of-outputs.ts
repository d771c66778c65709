import {
  defaultOutputLimits,
  type NbformatOutput,
  OutputsDocument,
  type OutputsPage,
} from '@nteract-mcp/output-shaping';
import { ToolError } from './to-tool-failure.js';

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
