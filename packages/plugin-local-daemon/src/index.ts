export { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
export { LocalDaemonOptions } from './local-daemon-options.js';
export { RuntimedSocketLocator } from './runtimed-socket-locator.js';
export { upgradeHandoffExitCode } from './upgrade-handoff-exit-classifier.js';
