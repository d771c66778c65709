import type { CallOutcome, ToolCall } from './tool-call.js';

/**
 * One step of the call pipeline, middleware-like: it does its part before and after `next` (the
 * steps after it), or answers without calling it.
 */
export type CallStep = (call: ToolCall, next: () => Promise<CallOutcome>) => Promise<CallOutcome>;
