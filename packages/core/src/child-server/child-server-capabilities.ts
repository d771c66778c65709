import { tasksExtension } from './execution-tasks.js';

/**
 * The capabilities the child server (and the proxy, before it learned the child's) declares:
 * tools and resources (list changes, subscriptions); tasks in both eras, 2025-11-25's `tasks`
 * (list, cancel, `tools/call`) and the 2026-07-28 `io.modelcontextprotocol/tasks` extension.
 */
export const childServerCapabilities: Readonly<Record<string, unknown>> = {
  tools: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { [tasksExtension]: {} },
};
