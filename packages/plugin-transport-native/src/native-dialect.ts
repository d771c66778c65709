import { type AdmissionRejection, type EraDialect, type TaskReport, tasksExtension } from '@nteract-mcp/core';
import { nativeErrorCodes } from './native-envelope.js';

/** The task methods of the 2026-07-28 tasks extension (no `tasks/result` or `tasks/list`). */
const taskMethods = Object.freeze(['tasks/get', 'tasks/update', 'tasks/cancel']);

/**
 * The server decides which calls become tasks: a run still going after this long is answered with
 * a task, one that ended sooner with the tool's result.
 */
const taskDecisionMs = 2_000;

/** Whether client capabilities `declared` name the tasks extension. */
function declaresTasks(declared: Readonly<Record<string, unknown>> | undefined): boolean {
  const extensions = declared?.extensions;
  return typeof extensions === 'object' && extensions !== null && tasksExtension in extensions;
}

/** A task method for a request whose client capabilities lack the tasks extension: -32021. */
function refuseUndeclared(
  method: string,
  declared: Readonly<Record<string, unknown>> | undefined,
): AdmissionRejection | undefined {
  if (declaresTasks(declared)) return undefined;
  return {
    kind: 'reject',
    code: nativeErrorCodes.missingClientCapability,
    message: `Missing required client capability: ${method} needs the ${tasksExtension} extension in the request's client capabilities.`,
    data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
  };
}

/**
 * How the child server speaks on a per-request connection (2026-07-28): the server sends no
 * requests (the person is asked through answers: `input_required` results and a task's
 * `inputRequests`, answered with `tasks/update`); a call runs as a task when the request's client
 * capabilities declare the tasks extension, and the server decides: a run that ends within
 * {@link taskDecisionMs} is answered with its result, a longer one with the task (`resultType:
 * 'task'`), a call that cannot start with the tool's error result; a task spells `ttlMs` and
 * `pollIntervalMs` and carries its result once it ended (an aborted run is a completed task whose
 * result says `isError`), its status changes are told with `notifications/tasks`, a cancel is
 * acknowledged (`{}`) even for a task that already ended, and every task method needs the tasks
 * extension declared on its own request (-32021); a missing resource is -32602 (SEP-2164).
 */
export const nativeDialect: EraDialect = Object.freeze({
  sendsRequests: false,
  resourceNotFoundCode: nativeErrorCodes.invalidParams,
  tasks: Object.freeze({
    methods: taskMethods,
    requested: (_params: Readonly<Record<string, unknown>>, declared: Readonly<Record<string, unknown>> | undefined) =>
      declaresTasks(declared),
    refuse: refuseUndeclared,
    resultWithinMs: taskDecisionMs,
    spell: (task: TaskReport) => ({
      taskId: task.taskId,
      status: task.status,
      statusMessage: task.statusMessage,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: null,
      pollIntervalMs: task.pollIntervalMs,
    }),
    created: (task: Readonly<Record<string, unknown>>) => ({ ...task, resultType: 'task' }),
    carriesResult: true,
    statusNotification: 'notifications/tasks',
    acknowledgesCancel: true,
  }),
});
