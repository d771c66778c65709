import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { tasksExtension } from './child-server-capabilities.js';
import type { ExecutionTasks, TaskEra } from './execution-tasks.js';
import type { KernelInputs } from './kernel-inputs.js';

/** `MissingRequiredClientCapabilityError` (2026-07-28). */
const missingClientCapabilityCode = -32021;

/** `tasks/update` (2026-07-28 tasks extension): the client's answers to a task's `inputRequests`. */
const UpdateTaskRequestSchema = z.object({
  method: z.literal('tasks/update'),
  params: z.looseObject({
    taskId: z.string(),
    inputResponses: z.record(z.string(), z.unknown()).optional(),
  }),
});

/**
 * The task methods of both eras on the child's SDK server: legacy (2025-11-25) `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`; native (the 2026-07-28 extension) `tasks/get`
 * (the result inlined), `tasks/update` (answers to input requests), `tasks/cancel` (an empty
 * acknowledgement), each refused -32021 when the request's client capabilities lack the extension.
 * A method of the other era is -32601, as a method a server does not have.
 */
export function registerTaskHandlers(
  server: Server,
  tasks: ExecutionTasks,
  inputs: KernelInputs,
  era: () => string | undefined,
  /** The client capabilities request `id` declared (native: its own envelope's). */
  declared: (id: string | number) => Readonly<Record<string, unknown>> | undefined,
): void {
  const current = (): TaskEra => (era() === 'native' ? 'native' : 'legacy');
  const only = (method: string, wanted: TaskEra): void => {
    if (current() !== wanted) {
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method} is not part of this protocol era`);
    }
  };
  // Native: a task method is for clients that declared the tasks extension on the request (-32021).
  const declaring = (method: string, id: string | number): void => {
    if (current() !== 'native') return;
    const extensions = declared(id)?.extensions;
    if (typeof extensions === 'object' && extensions !== null && tasksExtension in extensions) return;
    throw new McpError(
      missingClientCapabilityCode,
      `Missing required client capability: ${method} needs the ${tasksExtension} extension in the request's client capabilities.`,
      { requiredCapabilities: { extensions: { [tasksExtension]: {} } } },
    );
  };
  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    declaring('tasks/get', extra.requestId);
    const { taskId } = request.params;
    const task = await tasks.get(taskId, current(), extra.signal);
    return inputs.withInputRequests(tasks.executionIds(taskId), task, current()) as never;
  });
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    only('tasks/result', 'legacy');
    return (await tasks.waitForResult(request.params.taskId, extra.signal)) as never;
  });
  server.setRequestHandler(ListTasksRequestSchema, async (_request, extra) => {
    only('tasks/list', 'legacy');
    return (await tasks.list(extra.signal)) as never;
  });
  server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) => {
    declaring('tasks/cancel', extra.requestId);
    return (await tasks.cancel(request.params.taskId, current(), extra.signal)) as never;
  });
  server.setRequestHandler(UpdateTaskRequestSchema, (request, extra) => {
    only('tasks/update', 'native');
    declaring('tasks/update', extra.requestId);
    tasks.executionIds(request.params.taskId);
    inputs.answer(request.params.inputResponses ?? {});
    return {} as never;
  });
}
