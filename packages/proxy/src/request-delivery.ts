import { type Clock, honorsIdempotency, idempotencyMetaKey, type Logger } from '@nteract-mcp/core';
import type { ChildAnswerRelay } from './child-answer-relay.js';
import type { ChildConnection } from './child-connection.js';
import type { ChildSupervisor } from './child-supervisor.js';
import { type InFlightRequest, type InFlightRequests, idempotentMethods, readMethods } from './in-flight-requests.js';
import { defaultToolListWaitMs } from './mcp-proxy-options.js';
import { failureOfError, type ProxyFailure, toProxyWireError } from './to-proxy-wire-error.js';
import type { ToolListCache } from './tool-list-cache.js';

type Pending = InFlightRequest<ChildConnection>;

/** Default bound on how long a request waits for a child that is (re)starting. */
const defaultChildWaitMs = 60_000;

export interface RequestDeliveryOptions {
  readonly requests: InFlightRequests<ChildConnection>;
  /** Where every request that is not delivered gets its answer. */
  readonly relay: ChildAnswerRelay;
  readonly supervisor: ChildSupervisor;
  readonly tools: ToolListCache;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long a request waits for a child that is (re)starting; default {@link defaultChildWaitMs}. */
  readonly childWaitMs?: number;
  /** How long a cold-start `tools/list` waits for the child's list (`McpProxyOptions.toolListWaitMs`). */
  readonly toolListWaitMs?: number;
}

/**
 * Gets each forwarded request to a child, across child deaths (ARCHITECTURE decision 2): a
 * request goes to the live child when it is ready, else waits (bounded) for the next one. When a
 * new child is ready, an unsent request is sent to it; one sent to a dead child is sent again
 * once only when it is a read or a subscription, a read-only/idempotent tool, or a tool that honours idempotency
 * keys and the call carries one; otherwise it is answered "outcome unknown", naming the tool.
 *
 * Answers go through the {@link ChildAnswerRelay}, so each request still gets exactly one.
 */
export class RequestDelivery {
  readonly #options: RequestDeliveryOptions;

  public constructor(options: RequestDeliveryOptions) {
    this.#options = options;
  }

  /**
   * A new request: to `child` when it is ready, else it waits for one. A `coldToolList` (a
   * `tools/list` while no list is known at all) that has to wait is answered with the known list
   * (possibly `reconnect` alone) when the child's own is late. `line`: the client's bytes of the
   * request when the proxy changed nothing in it (see `ChildConnection.forward`).
   */
  public deliver(pending: Pending, child: ChildConnection | undefined, coldToolList = false, line?: Buffer): void {
    if (child?.ready) {
      this.#send(pending, child, line);
      return;
    }
    if (coldToolList) this.#fallBackToKnownTools(pending);
    this.#waitForChild(pending);
  }

  /** `child` is ready: every pending request is sent to it, sent again, or answered "outcome unknown". */
  public redeliverTo(child: ChildConnection): void {
    for (const pending of this.#options.requests.all()) this.#redeliver(pending, child);
  }

  /** The live child exited: what it had waits for the next one (a `tools/list` gets the known list at once). */
  public childGone(): void {
    const { requests, tools, relay } = this.#options;
    const known = tools.current().length > 0;
    for (const pending of requests.all()) {
      // A tools/list that met the death is answered from the known list at once, as one sent while no child is up.
      if (known && pending.request.method === 'tools/list') relay.serveKnownTools(pending);
      else if (!pending.timer) this.#waitForChild(pending);
    }
  }

  /** Answers every pending request with `failure`. */
  public failAll(failure: ProxyFailure): void {
    const error = toProxyWireError(failure);
    for (const pending of this.#options.requests.all()) this.#options.relay.fail(pending, error);
  }

  /** After a child death: send again, or answer "outcome unknown". */
  #redeliver(pending: Pending, child: ChildConnection): void {
    pending.timer?.cancel();
    pending.timer = undefined;
    const redelivery = this.#options.requests.redeliveryTo(pending, child, (candidate) =>
      this.#safeToResend(candidate),
    );
    if (redelivery === 'keep') return;
    if (redelivery === 'outcome-unknown') {
      this.#options.relay.reply(
        pending,
        undefined,
        toProxyWireError({ kind: 'outcome_unknown', method: pending.request.method, tool: pending.toolName }),
      );
      return;
    }
    this.#send(pending, child);
  }

  #safeToResend(pending: Pending): boolean {
    if (pending.toolName === undefined) {
      return readMethods.has(pending.request.method) || idempotentMethods.has(pending.request.method);
    }
    const tool = this.#options.tools.find(pending.toolName);
    if (!tool) return false;
    if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) return true;
    // Only with the key it went out with (a call to a tool that was read-only then went without one).
    const meta = (pending.request.params as { _meta?: unknown } | undefined)?._meta;
    return honorsIdempotency(tool._meta) && isRecord(meta) && typeof meta[idempotencyMetaKey] === 'string';
  }

  /** Nothing to serve yet: wait (bounded) for the child's own list rather than answer `reconnect` alone. */
  #fallBackToKnownTools(pending: Pending): void {
    const { clock, logger, tools, relay } = this.#options;
    pending.fallback = clock.setTimer(this.#options.toolListWaitMs ?? defaultToolListWaitMs, () => {
      pending.fallback = undefined;
      logger.warn('the child did not list its tools in time; serving the known tool list', {
        tools: tools.current().length,
      });
      relay.serveKnownTools(pending);
    });
  }

  #waitForChild(pending: Pending): void {
    const { supervisor, clock, relay } = this.#options;
    pending.timer?.cancel();
    pending.timer = clock.setTimer(this.#options.childWaitMs ?? defaultChildWaitMs, () => {
      pending.timer = undefined;
      relay.fail(
        pending,
        toProxyWireError({
          kind: 'child_unavailable',
          reason: 'The nteract MCP server is not running (it did not come back in time). Call reconnect to try again.',
        }),
      );
    });
    if (supervisor.status().breaker === 'open') {
      void supervisor.waitForChild(0).catch((error: unknown) => {
        relay.fail(pending, toProxyWireError(failureOfError(error, supervisor.status())));
      });
    }
  }

  #send(pending: Pending, child: ChildConnection, line?: Buffer): void {
    if (!child.writable) {
      // The child is already gone: the write would not reach it, so the request stays unsent.
      this.#waitForChild(pending);
      return;
    }
    try {
      child.forward(pending, (childId) => this.#options.requests.markSent(pending, child, childId), line);
    } catch (error) {
      // JSON.parse took it, JSON.stringify cannot write it back (nested thousands of levels deep).
      this.#options.relay.reply(
        pending,
        undefined,
        toProxyWireError({
          kind: 'invalid_request',
          message: `Invalid Request: the request cannot be forwarded (${error instanceof RangeError ? 'it is nested too deeply' : String(error)}).`,
        }),
      );
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
