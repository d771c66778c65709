export type { Clock, Timer } from './clock.js';
export type { LogFields, Logger, LogLevel } from './logger.js';
export { redactLogFields } from './redact-log-fields.js';
export type { SniffedId } from './sniff-top-level-id.js';
export { sniffTopLevelId, sniffTrailingId } from './sniff-top-level-id.js';
export type { LineSink } from './stderr-logger.js';
export { parseLogLevel, StderrLogger } from './stderr-logger.js';
export type { Subscription } from './subscription.js';
export { SystemClock } from './system-clock.js';
