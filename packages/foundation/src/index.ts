export { boundClientText, boundedClientTextChars, quoteClientText } from './bound-client-text.js';
export { cellContentVersion } from './cell-content-version.js';
export type { Clock, Timer } from './clock.js';
export { ListenerSet } from './listener-set.js';
export type { LogFields, Logger, LogLevel } from './logger.js';
export { mallocArenaEnvironment, mallocArenaMax, mallocMmapThresholdBytes } from './malloc-arena-environment.js';
export { notebookIdPattern } from './notebook-id-pattern.js';
export { randomHex } from './random-hex.js';
export { redactLogFields } from './redact-log-fields.js';
export {
  largeTransientBytes,
  releaseLargeTransient,
  releaseLargeTransientsNow,
  releaseLargeTransientWhenAnswered,
} from './release-large-transient.js';
export type { SniffedId } from './sniff-top-level-id.js';
export { sniffTopLevelId, sniffTrailingId } from './sniff-top-level-id.js';
export type { LineSink } from './stderr-logger.js';
export { parseLogLevel, StderrLogger } from './stderr-logger.js';
export type { Subscription } from './subscription.js';
export { SystemClock } from './system-clock.js';
export type { UserCacheEnvironment } from './user-cache-dir.js';
export { userCacheDir } from './user-cache-dir.js';
export {
  holdYoungGenerationAtStart,
  youngGenerationFlags,
  youngGenerationSemiSpaceMb,
} from './young-generation-flags.js';
