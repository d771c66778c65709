export type { TestContainerBuilder } from './create-test-container.js';
export type { FakeDaemonPortOptions } from './fake-daemon-port.js';
export type { FakeExecutor, FakeNotebookHandleOptions } from './fake-notebook-handle.js';
export type { LogRecord } from './recording-logger.js';

export { createTestContainer } from './create-test-container.js';
export { FakeChildProcess, FakeChildProcessPort } from './fake-child-process.js';
export { FakeDaemonPort } from './fake-daemon-port.js';
export { FakeNotebookHandle } from './fake-notebook-handle.js';
export { FakeSourceFileProbe } from './fake-source-file-probe.js';
export { ManualClock } from './manual-clock.js';
export { RecordingLogger } from './recording-logger.js';
