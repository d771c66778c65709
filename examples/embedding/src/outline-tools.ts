import { type ChildToolContribution, defineChildTool, jsonResult, SessionSlot } from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import * as z from 'zod';

/** One Markdown heading of a notebook. */
export interface OutlineHeading {
  readonly level: number;
  readonly title: string;
  readonly cell_id: string;
}

/**
 * Our own tool, contributed to core's child server: `notebook_outline`, the Markdown headings of
 * the active notebook. It reaches the notebook the way core's own tools do, through the
 * `SessionSlot` (which also says clearly why when no notebook is connected).
 */
@injectable()
export class OutlineTools implements ChildToolContribution {
  public readonly id = 'example.outline';
  public readonly specificationVersion = 'v1';

  public constructor(@inject(SessionSlot) private readonly slot: SessionSlot) {}

  public tools() {
    return [
      defineChildTool({
        name: 'notebook_outline',
        // The cells it names: a client extension may show them (here: ours, the outline's headings).
        shows: 'cells',
        description:
          'The outline of the active notebook: the headings of its Markdown cells in order, each with its level and the id of its cell (for get_cell or set_cell).',
        inputSchema: z.object({
          max_level: z.number().int().min(1).max(6).default(6).describe('Deepest heading level to list (1 = # only).'),
        }),
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        handler: async ({ max_level }) => {
          const { handle } = this.slot.access('document');
          const headings: OutlineHeading[] = [];
          for (const cell of await handle.listCells()) {
            if (cell.cellType !== 'markdown') continue;
            for (const line of cell.source.split('\n')) {
              const heading = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
              if (heading?.[1] && heading[2] && heading[1].length <= max_level) {
                headings.push({ level: heading[1].length, title: heading[2], cell_id: cell.id });
              }
            }
          }
          return jsonResult({ notebook_id: handle.notebookId, headings });
        },
      }),
    ];
  }
}
