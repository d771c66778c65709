import type { EraDialect, TaskReport } from './protocol-admission.js';

/**
 * Core's child server's {@link EraDialect} while no era has opened a connection: that of the MCP
 * revision the SDK's `Server` speaks by itself (2025-11-25). Nothing is served before an era opens
 * in production; a server connected without the era gate (core's own specs, the examples' in-memory
 * harness) does its own `initialize` handshake and checks a task-augmented call's answer against
 * its own task schema, so any other dialect would contradict the server it runs on. It may send
 * requests, a call asks for a task with its `task` param and gets `{ task }`, and a missing
 * resource is -32002.
 */
export const sdkDialect: EraDialect = Object.freeze({
  sendsRequests: true,
  resourceNotFoundCode: -32002,
  tasks: Object.freeze({
    methods: Object.freeze(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']),
    requested: (params: Readonly<Record<string, unknown>>) => typeof params.task === 'object' && params.task !== null,
    spell: (task: TaskReport) => ({
      taskId: task.taskId,
      status: task.status,
      statusMessage: task.statusMessage,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttl: null,
      pollInterval: task.pollIntervalMs,
    }),
    created: (task: Readonly<Record<string, unknown>>) => ({ task }),
    carriesResult: false,
    statusNotification: 'notifications/tasks/status',
    acknowledgesCancel: false,
  }),
});
