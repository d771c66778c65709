import type { EraDialect, TaskReport } from '@nteract-mcp/core';

/** The task methods of 2025-11-25. */
const taskMethods = Object.freeze(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/**
 * How the child server speaks on an `initialize`-based connection (2025-11-25 and before): the
 * server may send the client requests (the person is asked with `elicitation/create` while a call
 * runs); a call asks to run as a task with its `task` param (task augmentation) and is answered
 * `{ task }` at once, or an invalid-params error when it cannot start; a task spells `ttl` and
 * `pollInterval`, its result is asked for with `tasks/result`, its status changes are told with
 * `notifications/tasks/status`, a cancel answers the cancelled task and refuses one that already
 * ended; a missing resource is -32002.
 */
export const legacyDialect: EraDialect = Object.freeze({
  sendsRequests: true,
  resourceNotFoundCode: -32002,
  tasks: Object.freeze({
    methods: taskMethods,
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
