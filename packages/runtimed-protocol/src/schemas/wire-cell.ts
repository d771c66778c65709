import * as z from 'zod';
import { formatWirePath } from './describe-wire-issue.js';

/** The kinds of cell (`cell_type`). */
export const wireCellTypeSchema = z.enum(['code', 'markdown', 'raw']);
export type WireCellType = z.infer<typeof wireCellTypeSchema>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One nbformat 4 output as it travels and is stored (`stream`, `display_data`, `execute_result`,
 * `error`): an object with a string `output_type`. It is passed through as it is, not copied: its
 * other fields are the kernel's (checked without walking them, which keeps reading large outputs
 * cheap; see `bench/`).
 */
export const wireOutputSchema = z.custom<{ output_type: string; [field: string]: unknown }>(
  (value) => isRecord(value) && typeof value.output_type === 'string',
  {
    error: (issue) =>
      `Field '${formatWirePath(issue.path ?? [])}' must be an nbformat output (an object with a string output_type)`,
  },
);
export type WireOutput = z.infer<typeof wireOutputSchema>;

/** A JSON object whose members are not looked into (cell metadata); passed through as it is. */
export const wireMetadataSchema = z.custom<Record<string, unknown>>(isRecord, {
  error: (issue) => `Field '${formatWirePath(issue.path ?? [])}' must be an object`,
});

/**
 * A cell as the daemon sends it (documents, answers, broadcasts). `version` names its content (type
 * and source; not its outputs): it changes with every edit of either, and a request's
 * `expected_version` is checked against it. `edited_by` is the label of the peer that last
 * inserted the cell or changed its source or type (`human:<name>`, `agent:<slug>:<session>`);
 * absent when the daemon does not know (a cell as the file had it). Both are the room's, never
 * written into the `.ipynb`; both are absent from daemons before they were added.
 */
export const wireCellSchema = z.object({
  id: z.string().min(1),
  cell_type: wireCellTypeSchema,
  source: z.string(),
  outputs: z.array(wireOutputSchema),
  execution_count: z.number().nullable(),
  metadata: wireMetadataSchema,
  /**
   * nbformat's `attachments` of a markdown or raw cell (pasted files by name, each a MIME bundle),
   * passed through as they are; absent when it has none, and from daemons before they were kept.
   */
  attachments: wireMetadataSchema.optional(),
  version: z.string().min(1).optional(),
  edited_by: z.string().min(1).optional(),
});
export type WireCell = z.infer<typeof wireCellSchema>;

/**
 * What a source edit of a cell tells (a `cell_source_set` broadcast, the answer to the editing
 * peer's `update_cell`), to peers whose handshake declared `source_edits`: the cell's id, its type
 * (unchanged by the edit), its new source and the room's `version` and `edited_by` that go with it.
 * Everything else of the cell (outputs, execution count, metadata, attachments) is as the peer holds
 * it: the edit did not change it, and it does not travel again.
 */
export const wireCellSourceSchema = wireCellSchema.pick({
  id: true,
  cell_type: true,
  source: true,
  version: true,
  edited_by: true,
});
export type WireCellSource = z.infer<typeof wireCellSourceSchema>;
