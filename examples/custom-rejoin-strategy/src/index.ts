export { ArchiveOptions } from './archive-options.js';
export { ArchiveRejoinStrategy } from './archive-rejoin-strategy.js';
export { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';
export { runArchiveRejoinExample } from './run-archive-rejoin-example.js';
