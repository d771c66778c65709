export type { TestDaemon } from './start-test-daemon.js';

export { startTestDaemon } from './start-test-daemon.js';
