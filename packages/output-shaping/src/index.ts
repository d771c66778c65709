export type { MiddleCut } from './cut-middle.js';
export { cutMiddle } from './cut-middle.js';
export { htmlToMarkdown } from './html-to-markdown.js';
export type { NbformatOutput } from './nbformat-output.js';
export type { DisplayUpdate, OutputChange } from './output-collector.js';
export { OutputCollector } from './output-collector.js';
export type { OutputLimits } from './output-limits.js';
export { defaultOutputLimits } from './output-limits.js';
export type { OutputsPage } from './outputs-document.js';
export { describeOutput, OutputsDocument } from './outputs-document.js';
export type { ImageBounds, PreparedImage } from './prepare-image.js';
export { describeBytes, prepareImage } from './prepare-image.js';
export type { OutputRepresentation } from './represent-output.js';
export {
  htmlConversionLimit,
  imageMimeTypes,
  representOutput,
  representOutputs,
  textPreference,
} from './represent-output.js';
export type { ReadMoreCall, ResultShaperOptions, ShapedImage, ShapedOutput } from './result-shaper.js';
export { ResultShaper } from './result-shaper.js';
