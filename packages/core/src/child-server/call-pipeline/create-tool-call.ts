import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomHex } from '@nteract-mcp/foundation';
import type { UrlElicitation } from '../../contributions/notebook-backend.js';
import { honorsIdempotency, idempotencyMetaKey } from '../../handoff/handoff-contract.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { coalesceProgress } from '../executions/coalesce-progress.js';
import type { InputRounds } from '../executions/input-rounds.js';
import type { UnsettledCalls } from '../executions/unsettled-calls.js';
import type { ChildToolRegistry } from '../tools/child-tool-registry.js';
import type { ClientCancellations } from '../transport/client-cancellations.js';
import type { ToolCall } from './tool-call.js';

export interface CreateToolCallInit {
  readonly registry: ChildToolRegistry;
  readonly unsettled: UnsettledCalls;
  readonly cancellations: ClientCancellations;
  readonly inputRounds: InputRounds;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The client's capabilities for a call with these params (the request's own in the native era, else the session's). */
  readonly declaredFor: (params: CallToolRequest['params']) => Readonly<Record<string, unknown>> | undefined;
  /** The params of the request as it was sent, when the transport kept them. */
  readonly sentParams: (extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => unknown;
  /** How a call whose client declared `declared` may send the person to a page, if it may. */
  readonly urlElicitation: (declared: Readonly<Record<string, unknown>> | undefined) => UrlElicitation | undefined;
}

/** What the call pipeline knows of one `tools/call` before its first step. */
export function createToolCall(
  init: CreateToolCallInit,
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): ToolCall {
  const { registry, unsettled, cancellations, inputRounds, clock, logger } = init;
  const meta = request.params._meta;
  const name = request.params.name;
  const args = request.params.arguments;
  const declared = init.declaredFor(request.params);
  const definition = registry.definition(name);
  const policies = registry.policies(name);
  const given = meta?.[idempotencyMetaKey];
  // A tool that passes keys to the daemon always has one (the proxy's, or one of our own), so a
  // run of it once more after a lost answer is applied once; the agent's retry of a call whose
  // outcome it was told is unknown is sent with that call's key.
  const idempotencyKey = honorsIdempotency(definition?._meta)
    ? (unsettled.keyOf(name, args) ?? (typeof given === 'string' && given.length > 0 ? given : randomHex(16)))
    : undefined;
  const progressToken = meta?.progressToken;
  const startedRuns = new Set<string>();
  const rounds = inputRounds.applies(policies?.inputRounds === true, declared);
  // Coalesced: a cell printing thousands of lines sends a few notifications a second, not one per output.
  const reportProgress = coalesceProgress(
    (progress, message) => {
      if (progressToken === undefined) return;
      extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
        .catch((error: unknown) => logger.debug('a progress notification was not sent', { error }));
    },
    () => clock.now(),
  );
  const cancelled = cancellations.signalFor(extra.requestId);
  const connectionElicitation = init.urlElicitation(declared);
  // The call's own: its cancellation ends the person's page, its progress says the call still waits.
  const urlElicitation: UrlElicitation | undefined = connectionElicitation && {
    ask: (request, signal) => connectionElicitation.ask(request, signal),
    completed: (elicitationId) => connectionElicitation.completed(elicitationId),
    cancelled,
    waiting: (secondsWaited, message) => reportProgress(secondsWaited, message),
  };
  const context = {
    idempotencyKey,
    signal: extra.signal,
    reportProgress,
    cancelled,
    // The person answers the code's input() during the call (native: through its input_required answer).
    allowInput: inputRounds.allowsInput(rounds, declared),
    // Recorded, then told: the kernel may have asked for input before the call heard its run started.
    onExecution: (executionId: string) => {
      startedRuns.add(executionId);
      inputRounds.started(executionId);
    },
    ...(urlElicitation === undefined ? {} : { urlElicitation }),
  };
  const sent = init.sentParams(extra) as Record<string, unknown> | undefined;
  return {
    name,
    args,
    params: request.params,
    sent: sent ?? request.params,
    declared,
    definition,
    policies,
    idempotencyKey,
    context,
    startedRuns,
    inputRounds: rounds,
    signal: extra.signal,
    startedAt: clock.now(),
    release: () => cancellations.release(extra.requestId),
  };
}
