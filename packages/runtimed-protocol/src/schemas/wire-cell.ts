import { z } from 'zod';

/** The kinds of cell (`cell_type`). */
export const wireCellTypeSchema = z.enum(['code', 'markdown', 'raw']);
export type WireCellType = z.infer<typeof wireCellTypeSchema>;

/**
 * One nbformat 4 output as it travels and is stored (`stream`, `display_data`, `execute_result`,
 * `error`): a string `output_type`; every other field passes through untouched.
 */
export const wireOutputSchema = z.looseObject({ output_type: z.string() });
export type WireOutput = z.infer<typeof wireOutputSchema>;

/** A JSON object whose members are not looked into (cell metadata). */
export const wireMetadataSchema = z.record(z.string(), z.unknown());

/** A cell as the daemon sends it (documents, answers, broadcasts). */
export const wireCellSchema = z.object({
  id: z.string().min(1),
  cell_type: wireCellTypeSchema,
  source: z.string(),
  outputs: z.array(wireOutputSchema),
  execution_count: z.number().nullable(),
  metadata: wireMetadataSchema,
});
export type WireCell = z.infer<typeof wireCellSchema>;
