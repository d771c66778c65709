import { type ChildExit, CoreError } from '@nteract-mcp/core';
import { boundClientText, quoteClientText } from '@nteract-mcp/foundation';
import { answerTooLargeMessage } from './answer-too-large-message.js';
import { describeChildExit } from './restart-policy.js';
import { toolListChangedIncompatiblyMessage } from './tool-list-cache.js';

/** JSON-RPC code of the proxy's own errors (restart budget exhausted, outcome unknown, …). */
export const proxyErrorCode = -32000;
/** JSON-RPC "Invalid Request". */
const invalidRequestCode = -32600;
/** JSON-RPC "Invalid params". */
const invalidParamsCode = -32602;
/** JSON-RPC "Internal error". */
const internalErrorCode = -32603;

/**
 * Every way a request can fail in the proxy itself, by the `data.kind` its answer carries:
 * - `breaker_open`: the restart breaker is open (crash budget spent, or a fatal exit); names the
 *   last exit and when the next attempt happens;
 * - `child_unavailable`: no child came up in time, or it stopped;
 * - `outcome_unknown`: the child died with a mutation unanswered that is not safe to resend;
 * - `too_large`: an answer over a line or message limit;
 * - `invalid_request` / `invalid_params`: the request itself is at fault;
 * - `unreadable_line`: a line that is not one JSON-RPC message (-32700 / -32600 as the framer says);
 * - `tool_list_incompatible`: an upgrade removed tools; the proxy exits;
 * - `restart_failed`: the `reconnect` tool could not start a new child;
 * - `shutting_down`: the proxy is closing;
 * - `internal`: a fault in the proxy while handling the request;
 * - `protocol_era`: a contributed protocol era refused the request (its own code and `data` are kept).
 */
export type ProxyFailure =
  | {
      readonly kind: 'breaker_open';
      readonly reason: string;
      readonly lastExit: ChildExit | undefined;
      readonly nextAttemptAt: number | undefined;
    }
  | { readonly kind: 'child_unavailable'; readonly reason: string }
  | { readonly kind: 'outcome_unknown'; readonly method: string; readonly tool: string | undefined }
  | { readonly kind: 'too_large'; readonly limit: number; readonly stage: 'child' | 'client'; readonly bytes?: number }
  | { readonly kind: 'invalid_request'; readonly message: string }
  | { readonly kind: 'invalid_params'; readonly message: string }
  | { readonly kind: 'unreadable_line'; readonly code: number; readonly message: string }
  | { readonly kind: 'tool_list_incompatible' }
  | { readonly kind: 'restart_failed'; readonly error: unknown }
  | { readonly kind: 'shutting_down' }
  | { readonly kind: 'internal'; readonly doing: string; readonly error: unknown }
  | { readonly kind: 'protocol_era'; readonly code: number; readonly message: string; readonly data?: unknown };

/** A JSON-RPC error object as the proxy answers it. */
export interface ProxyWireError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** The breaker and exit details of a supervisor, for {@link failureOfError}. */
export interface BreakerDetails {
  readonly lastExit: ChildExit | undefined;
  readonly nextAttemptAt?: number;
}

/**
 * The one place the proxy turns a failure into the JSON-RPC error it answers. Every error carries
 * `data.kind` (see {@link ProxyFailure}); a protocol era's refusal keeps the era's code and data.
 */
export function toProxyWireError(failure: ProxyFailure): ProxyWireError {
  switch (failure.kind) {
    case 'breaker_open':
      return {
        code: proxyErrorCode,
        message: failure.reason,
        data: {
          kind: failure.kind,
          last_exit: failure.lastExit ? describeChildExit(failure.lastExit) : null,
          next_attempt_at: failure.nextAttemptAt === undefined ? null : new Date(failure.nextAttemptAt).toISOString(),
        },
      };
    case 'child_unavailable':
      return { code: proxyErrorCode, message: failure.reason, data: { kind: failure.kind } };
    case 'outcome_unknown': {
      const what =
        failure.tool !== undefined ? `the tool ${quoteClientText(failure.tool)}` : quoteClientText(failure.method);
      return {
        code: proxyErrorCode,
        message: `The MCP server restarted while ${what} was running; it may or may not have taken effect. Check the notebook before retrying.`,
        data: { kind: failure.kind, tool: failure.tool === undefined ? null : boundClientText(failure.tool) },
      };
    }
    case 'too_large':
      return {
        code: proxyErrorCode,
        message: answerTooLargeMessage(failure),
        data: { kind: failure.kind, limit: failure.limit, stage: failure.stage },
      };
    case 'invalid_request':
      return { code: invalidRequestCode, message: failure.message, data: { kind: failure.kind } };
    case 'invalid_params':
      return { code: invalidParamsCode, message: failure.message, data: { kind: failure.kind } };
    case 'unreadable_line':
      return { code: failure.code, message: failure.message, data: { kind: failure.kind } };
    case 'tool_list_incompatible':
      return { code: proxyErrorCode, message: toolListChangedIncompatiblyMessage, data: { kind: failure.kind } };
    case 'restart_failed':
      return {
        code: internalErrorCode,
        message: `Child restart failed: ${describeError(failure.error)}`,
        data: { kind: failure.kind },
      };
    case 'shutting_down':
      return { code: proxyErrorCode, message: 'The nteract MCP proxy is shutting down.', data: { kind: failure.kind } };
    case 'internal':
      return {
        code: internalErrorCode,
        message: `Internal error in the nteract MCP proxy${failure.doing}: ${describeError(failure.error)}`,
        data: { kind: failure.kind },
      };
    case 'protocol_era':
      return {
        code: failure.code,
        message: failure.message,
        ...(failure.data === undefined ? {} : { data: failure.data }),
      };
  }
}

/**
 * The failure a supervisor error stands for: an open breaker (`restartBudgetExhausted`,
 * `childStartFailed`) with `breaker`'s last exit and next attempt, else the child is unavailable.
 */
export function failureOfError(error: unknown, breaker: BreakerDetails): ProxyFailure {
  const reason = describeError(error);
  if (CoreError.is(error, 'restartBudgetExhausted') || CoreError.is(error, 'childStartFailed')) {
    return { kind: 'breaker_open', reason, lastExit: breaker.lastExit, nextAttemptAt: breaker.nextAttemptAt };
  }
  return { kind: 'child_unavailable', reason };
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
