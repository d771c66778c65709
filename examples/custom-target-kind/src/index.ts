export { createMemoryNotebookPlugin } from './create-memory-notebook-plugin.js';
export { MemoryNotebook } from './memory-notebook.js';
export { MemoryNotebookBackend } from './memory-notebook-backend.js';
export { MemoryNotebookHandle } from './memory-notebook-handle.js';
export { MemoryNotebookStore } from './memory-notebook-store.js';
export type { MemoryTarget } from './memory-target.js';
export { isMemoryTarget, memoryKind, memoryScheme } from './memory-target.js';
export type { ExampleReport } from './run-memory-notebook-example.js';
export { runMemoryNotebookExample } from './run-memory-notebook-example.js';
