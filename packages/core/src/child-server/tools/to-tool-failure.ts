import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { CoreError, type CoreErrorKind } from '../../errors/core-error.js';

/**
 * A tool-level failure: the call reached the tool, which answers with `isError: true` and this
 * text (a successful JSON-RPC response). Thrown by tool handlers, for bad arguments too (SEP-1303:
 * the model reads the text and corrects its call); never sent as a JSON-RPC error.
 */
export class ToolError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ToolError';
  }
}

/**
 * A JSON-RPC invalid-params error (-32602) whose wire `message` is exactly the given text (the SDK's
 * `McpError` would prefix `MCP error -32602: `, which agents trained on the original never saw).
 * It is an `McpError`, so the SDK sends its `code`. For protocol errors only (an unknown tool or
 * resource); a tool's bad arguments are a {@link ToolError}.
 */
export class InvalidParamsError extends McpError {
  public constructor(text: string, data?: unknown) {
    super(ErrorCode.InvalidParams, text, data);
    this.message = text;
  }
}

/** How one tool words a failure of the operation it performs. */
export interface FailureContext {
  /** Wraps the message of an operation failure, e.g. ``(m) => `Failed to save notebook: ${m}` ``. */
  readonly wrap?: (message: string) => string;
  /** Texts for the remote party's machine-readable codes (`CoreError.code`); they win over `wrap`. */
  readonly codes?: Readonly<Record<string, (message: string) => string>>;
}

/**
 * Kinds whose message already is the whole answer an agent needs: the arguments named something
 * that cannot be used (the message says what to give instead), the session texts agents know,
 * readiness and activation errors. Never wrapped.
 */
const verbatimKinds: ReadonlySet<CoreErrorKind> = new Set([
  'invalidTarget',
  'unsupportedTarget',
  'cellNotFound',
  'staleCell',
  'undoRefused',
  'noSession',
  'runtimeNotReady',
  'documentNotReady',
  'localSyncFailed',
  'sourceDegraded',
  'supersededActivation',
  'unsupportedOperation',
]);

/**
 * The one place where errors become what a tool call answers: a {@link ToolError} (tool result
 * with `isError: true`, bad arguments included) or an `McpError` (a JSON-RPC error a tool chose).
 *
 * - `ToolError` and `McpError` pass through unchanged.
 * - `CoreError` kinds `invalidTarget`, `unsupportedTarget`, `cellNotFound` (arguments naming
 *   something unusable), `staleCell`, `undoRefused`, `noSession`, `runtimeNotReady`, `documentNotReady`, `localSyncFailed`,
 *   `sourceDegraded`, `supersededActivation`, `unsupportedOperation` ⇒ tool error with the message
 *   as is.
 * - any other error ⇒ tool error, worded by `context.codes[error.code]` when the remote party gave
 *   a known code, else by `context.wrap`, else its message.
 */
export function toToolFailure(error: unknown, context: FailureContext = {}): ToolError | McpError {
  if (error instanceof ToolError || error instanceof McpError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (CoreError.is(error)) {
    if (verbatimKinds.has(error.kind)) return new ToolError(message, { cause: error });
    const byCode = error.code === undefined ? undefined : context.codes?.[error.code];
    if (byCode) return new ToolError(byCode(message), { cause: error });
  }
  return new ToolError(context.wrap ? context.wrap(message) : message, { cause: error });
}
