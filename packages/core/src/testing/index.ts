export type { LogRecord } from '@nteract-mcp/foundation/testing';
export { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
export type { TestContainerBuilder } from './create-test-container.js';
export { createTestContainer } from './create-test-container.js';
export { describeNotebookHandleContract } from './describe-notebook-handle-contract.js';
export { FakeChildProcess, FakeChildProcessPort } from './fake-child-process.js';
export type { FakeDaemonPortOptions } from './fake-daemon-port.js';
export { FakeDaemonPort } from './fake-daemon-port.js';
export { FakeInitializeEra, fakeInitializeEraPlugin } from './fake-initialize-era.js';
export type { FakeNotebookBackendOptions } from './fake-notebook-backend.js';
export { FakeNotebookBackend, fakeReopeningBackend } from './fake-notebook-backend.js';
export type { FakeExecutor, FakeNotebookHandleOptions } from './fake-notebook-handle.js';
export { FakeNotebookHandle } from './fake-notebook-handle.js';
export { FakeSourceFileProbe } from './fake-source-file-probe.js';
export { NotModelledError } from './not-modelled-error.js';
export type {
  ContractNotebook,
  ContractTestApi,
  NotebookHandleContractSetup,
} from './notebook-handle-contract-support.js';
export { ContractViolation } from './notebook-handle-contract-support.js';
export type { ChildServerTestHarness, ChildServerTestHarnessOptions } from './start-child-server-test-harness.js';
export {
  fakeLocalBackendsPlugin,
  invalidParams,
  resultText,
  startChildServerTestHarness,
  testAgentSession,
  testClientInfo,
  testExecutor,
  toolError,
} from './start-child-server-test-harness.js';
