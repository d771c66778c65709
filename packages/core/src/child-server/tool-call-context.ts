import type { UrlElicitation } from '../contributions/notebook-backend.js';

/** What a tool handler knows about the call besides its arguments. */
export interface ToolCallContext {
  /** From the request's `_meta[idempotencyMetaKey]`; derive sub-keys (`<key>:insert`) for several mutations. */
  readonly idempotencyKey: string | undefined;
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal;
  /**
   * Aborted only when the client cancels this call (`notifications/cancelled`), not when the
   * connection closes (the proxy may be handing the session to a new child): what stops work the
   * call started, e.g. interrupts its execution.
   */
  readonly cancelled: AbortSignal;
  /**
   * Reports progress when the request carried `_meta.progressToken` (else does nothing). Never
   * throws and never waits: a lost notification does not fail the tool.
   */
  reportProgress(progress: number, message: string): void;
  /** The person can be asked for the code's `input()` during this call (the client declared elicitation). */
  readonly allowInput?: boolean;
  /**
   * Sends the person to a page out of band during this call (the client declared URL-mode
   * elicitation, and the connection lets the server send it requests); absent otherwise.
   */
  readonly urlElicitation?: UrlElicitation;
  /**
   * Set when the person said yes to the tool's confirmation question during this call, with the
   * fingerprint of the question they saw (when it had one); absent when nobody was asked.
   */
  readonly confirmed?: { readonly fingerprint?: string };
  /** Told the id of each execution the call starts (the server answers their `input()` requests). */
  readonly onExecution?: (executionId: string) => void;
}
