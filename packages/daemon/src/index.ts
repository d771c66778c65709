export type { DaemonErrorKind } from './daemon-error.js';
export { DaemonError } from './daemon-error.js';
export type { DaemonLayout, DaemonLayoutOptions } from './resolve-daemon-layout.js';
export { resolveDaemonLayout } from './resolve-daemon-layout.js';
