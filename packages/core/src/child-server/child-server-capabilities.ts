/**
 * The 2026-07-28 tasks extension, as named in the `extensions` capability maps. It lives here, in
 * a module that imports nothing, because the proxy reads it too: the proxy's bundle must not pull in
 * the MCP SDK's zod schemas (several MB of heap) through the task engine.
 */
export const tasksExtension = 'io.modelcontextprotocol/tasks';

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
