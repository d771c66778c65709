/**
 * One nbformat 4 output as Jupyter writes it (`stream`, `display_data`, `execute_result`,
 * `error`): core's `CellOutput` is this shape, so any backend's outputs can be shaped.
 */
export type NbformatOutput = Readonly<Record<string, unknown>> & { readonly output_type: string };
