export { ArchiveNotebookBackend } from './archive-notebook-backend.js';
export { ArchiveOptions } from './archive-options.js';
export type { ArchiveTarget } from './archive-target.js';
export { archiveKind, archiveScheme, isArchiveTarget } from './archive-target.js';
export { createArchiveRejoinPlugin } from './create-archive-rejoin-plugin.js';
export type { ExampleReport } from './run-archive-rejoin-example.js';
export { runArchiveRejoinExample } from './run-archive-rejoin-example.js';
