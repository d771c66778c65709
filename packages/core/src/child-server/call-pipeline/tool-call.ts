import type { CallToolRequest, CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallContext, ToolPolicies } from '../tools/child-tool-registry.js';

/** One `tools/call` as the steps of the call pipeline see it. */
export interface ToolCall {
  readonly name: string;
  readonly args: unknown;
  readonly params: CallToolRequest['params'];
  /** The params as sent: the SDK's schema strips what it does not know (a retry's `inputResponses`, `requestState`). */
  readonly sent: Readonly<Record<string, unknown>>;
  /** The client's capabilities for this call (the request's own in the 2026-07-28 era). */
  readonly declared: Readonly<Record<string, unknown>> | undefined;
  /** The tool's `tools/list` entry; `undefined` for an unknown tool. */
  readonly definition: Tool | undefined;
  /** What the tool declared; `undefined` for an unknown tool (it gets no step's work). */
  readonly policies: ToolPolicies | undefined;
  /** The idempotency key the call runs with (a tool that honours keys always has one). */
  readonly idempotencyKey: string | undefined;
  /** What the tool's handler is given. */
  readonly context: ToolCallContext;
  /** The executions the call started (their `input()` is answered through the call: see `InputRounds`). */
  readonly startedRuns: ReadonlySet<string>;
  /** The call can be answered `input_required` (see `InputRounds.applies`). */
  readonly inputRounds: boolean;
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /** When the call began (the clock's ms). */
  readonly startedAt: number;
  /** The call no longer follows the client's cancellation of its request (said once it is answered or became a task). */
  release(): void;
}

/**
 * How a step's call ended: the tool's `result`, which the steps it passes back through may add to
 * (a note, the session report), or an `answer` that goes to the client as it is (a task, an
 * `input_required`, the person's refusal).
 */
export type CallOutcome =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'answer'; readonly answer: Record<string, unknown> };

/** The tool's result, which the steps it passes back through may add to. */
export function toolResult(result: CallToolResult): CallOutcome {
  return { kind: 'result', result };
}

/** An answer that goes to the client as it is. */
export function finalAnswer(answer: Record<string, unknown>): CallOutcome {
  return { kind: 'answer', answer };
}
