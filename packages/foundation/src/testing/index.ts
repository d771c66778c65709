export { ManualClock } from './manual-clock.js';
export type { LogRecord } from './recording-logger.js';
export { RecordingLogger } from './recording-logger.js';
