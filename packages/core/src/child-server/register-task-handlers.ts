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
import type { ExecutionTasks, TaskEra } from './execution-tasks.js';
import type { KernelInputs } from './kernel-inputs.js';

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
 * acknowledgement). A method of the other era is -32601, as a method a server does not have.
 */
export function registerTaskHandlers(
  server: Server,
  tasks: ExecutionTasks,
  inputs: KernelInputs,
  era: () => string | undefined,
): void {
  const current = (): TaskEra => (era() === 'native' ? 'native' : 'legacy');
  const only = (method: string, wanted: TaskEra): void => {
    if (current() !== wanted) {
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method} is not part of this protocol era`);
    }
  };
  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
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
    return (await tasks.cancel(request.params.taskId, current(), extra.signal)) as never;
  });
  server.setRequestHandler(UpdateTaskRequestSchema, (request) => {
    only('tasks/update', 'native');
    tasks.executionIds(request.params.taskId);
    inputs.answer(request.params.inputResponses ?? {});
    return {} as never;
  });
}
