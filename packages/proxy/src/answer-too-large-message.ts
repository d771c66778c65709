import { describeMiB } from '@nteract-mcp/core';

/**
 * The text of the error answer that replaces an answer too large to deliver: one the child wrote
 * over the proxy's line cap (`stage: 'child'`, size unknown since it was skipped), or one over the
 * limit of a message to the MCP client (`stage: 'client'`). It says how to ask for less.
 */
export function answerTooLargeMessage(options: {
  readonly limit: number;
  readonly stage: 'child' | 'client';
  readonly bytes?: number;
}): string {
  const size = options.bytes === undefined ? '' : ` it is ${options.bytes} bytes (${describeMiB(options.bytes)}),`;
  const where =
    options.stage === 'child'
      ? `runt-mcp wrote a message over the proxy's ${options.limit}-byte (${describeMiB(options.limit)}) limit`
      : `over the ${options.limit}-byte (${describeMiB(options.limit)}) limit of one message to the MCP client`;
  return `The answer was too large to deliver:${size} ${where}, so it was dropped. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs in pages (get_cell or get_results with offset and length).`;
}
