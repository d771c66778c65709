/**
 * How much of a notebook's outputs one tool result shows. The text caps are in characters of the
 * shown text (about four per model token); the image caps in bytes of base64 data. Everything cut
 * is marked where it was cut and stays readable in pages (`offset`/`length` on `get_results` and
 * `get_cell`).
 */
export interface OutputLimits {
  /** Characters of one output's text shown: its head and its tail, the middle cut. */
  readonly outputChars: number;
  /** Characters of output text in one result, over every output of every cell in it. */
  readonly resultChars: number;
  /** Outputs shown per cell or execution: the first ones and the last {@link tailOutputs}. */
  readonly maxOutputs: number;
  /** Of {@link maxOutputs}, how many are the last outputs (errors and results come last). */
  readonly tailOutputs: number;
  /** Base64 characters of one image; a larger PNG is downscaled, another image is referred to. */
  readonly imageBytes: number;
  /** Longest edge of an image shown, in pixels; a larger PNG is downscaled. */
  readonly imageEdgePixels: number;
  /** Base64 characters of all images of one result. */
  readonly resultImageBytes: number;
  /** Images in one result. */
  readonly resultImages: number;
  /** Characters of one page when `length` is not given. */
  readonly defaultPageChars: number;
}

/**
 * The defaults: about 20k tokens of text per result (MCP clients such as Claude Code warn from
 * 25k), a 640×480 matplotlib figure (about 25 KB) shown as is, and images at most 1568 px on
 * their long edge (larger ones are scaled down by the model's API anyway).
 */
export const defaultOutputLimits: OutputLimits = Object.freeze({
  outputChars: 6000,
  resultChars: 80_000,
  maxOutputs: 50,
  tailOutputs: 10,
  imageBytes: 1024 * 1024,
  imageEdgePixels: 1568,
  resultImageBytes: 4 * 1024 * 1024,
  resultImages: 20,
  defaultPageChars: 80_000,
});
