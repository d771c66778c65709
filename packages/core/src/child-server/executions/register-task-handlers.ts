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
import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { ExecutionTasks } from './execution-tasks.js';
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
 * Every task method on the child's SDK server: `tasks/get` (the task; with its result where the
 * task carries it), `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update` (answers to a
 * task's input requests), each served only where the connection's era has it
 * (`TaskDialect.methods`; another is -32601, as a method a server does not have) and refused as
 * the era refuses it for the request's client capabilities (`TaskDialect.refuse`).
 */
export function registerTaskHandlers(
  server: Server,
  tasks: ExecutionTasks,
  inputs: KernelInputs,
  dialect: () => EraDialect,
  /** The client capabilities request `id` declared (native: its own envelope's). */
  declared: (id: string | number) => Readonly<Record<string, unknown>> | undefined,
): void {
  const served = (method: string, id: string | number): void => {
    const conventions = dialect().tasks;
    if (!conventions.methods.includes(method)) {
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method} is not part of this protocol era`);
    }
    const refusal = conventions.refuse?.(method, declared(id));
    if (refusal) throw new McpError(refusal.code, refusal.message, refusal.data);
  };
  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    served('tasks/get', extra.requestId);
    const { taskId } = request.params;
    const task = await tasks.get(taskId, extra.signal);
    return inputs.withInputRequests(tasks.executionIds(taskId), task) as never;
  });
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    served('tasks/result', extra.requestId);
    return (await tasks.waitForResult(request.params.taskId, extra.signal)) as never;
  });
  server.setRequestHandler(ListTasksRequestSchema, async (_request, extra) => {
    served('tasks/list', extra.requestId);
    return (await tasks.list(extra.signal)) as never;
  });
  server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) => {
    served('tasks/cancel', extra.requestId);
    return (await tasks.cancel(request.params.taskId, extra.signal)) as never;
  });
  server.setRequestHandler(UpdateTaskRequestSchema, (request, extra) => {
    served('tasks/update', extra.requestId);
    tasks.executionIds(request.params.taskId);
    inputs.answer(request.params.inputResponses ?? {});
    return {} as never;
  });
}
