import type { CallOutcome, ToolCall } from './tool-call.js';

/**
 * One step of the call pipeline, middleware-like: it does its part before and after `next` (the
 * steps after it), or answers without calling it. `next(changed)` hands the steps after it a
 * changed call (e.g. its context telling the handler what the person confirmed).
 */
export type CallStep = (call: ToolCall, next: (changed?: ToolCall) => Promise<CallOutcome>) => Promise<CallOutcome>;
