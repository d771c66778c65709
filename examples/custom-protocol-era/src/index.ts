export { createAcmeDraftEraPlugin } from './create-acme-draft-era-plugin.js';
export { DraftConnection } from './draft-connection.js';
export { draftDialect } from './draft-dialect.js';
export { DraftInitializeAdmission, draftProtocolVersion } from './draft-initialize-admission.js';
export type { DraftEraReport } from './run-draft-era-example.js';
export { runDraftEraExample } from './run-draft-era-example.js';
export type { LineAnswer, LineServer } from './start-line-server.js';
export { startLineServer } from './start-line-server.js';
