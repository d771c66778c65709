import type { JsonRpcId, JsonRpcRequest } from '@nteract-mcp/core';

/** Methods safe to send again after the child died with them unanswered: they change nothing. */
export const readMethods: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);

/**
 * Methods that change something, but the same however often they are sent (a subscription):
 * safe to send again after the child died with them unanswered, like the reads.
 */
export const idempotentMethods: ReadonlySet<string> = new Set(['resources/subscribe', 'resources/unsubscribe']);

/** A cancellable timer, as `Clock.setTimer` returns it. */
interface Cancellable {
  cancel(): void;
}

/**
 * One upstream request the proxy forwards, until it is answered. `C` is the child connection it
 * is written to (an opaque object to the ledger).
 */
export interface InFlightRequest<C extends object> {
  readonly upstreamId: JsonRpcId;
  readonly request: JsonRpcRequest;
  readonly toolName: string | undefined;
  /** When the proxy received it (clock milliseconds), for the log line of its answer. */
  readonly receivedAt: number;
  /** The child connection it was last written to, and its id there; `undefined` while unsent. */
  readonly sentTo: C | undefined;
  readonly childId: number | undefined;
  /** It was sent again to a new child once already. */
  readonly resent: boolean;
  /** Bounds the wait for a child; set while no child can take it. */
  timer: Cancellable | undefined;
  /** For a cold-start `tools/list`: answers with the known list when the child's list is late. */
  fallback: Cancellable | undefined;
}

interface Entry<C extends object> extends InFlightRequest<C> {
  sentTo: C | undefined;
  childId: number | undefined;
  resent: boolean;
}

/**
 * What to do with a request now that `child` is the live child (ARCHITECTURE decision 2):
 * - `send`: unsent, or sent to a dead child and safe to send once more (the request is marked resent);
 * - `outcome-unknown`: sent to a dead child, and not safe to resend (or resent already);
 * - `keep`: already written to `child`; wait for its answer.
 */
export type Redelivery = 'send' | 'outcome-unknown' | 'keep';

/**
 * The ledger of forwarded requests, without streams: each is *unsent*, *sent* (to one child, under
 * one child id), *resent once*, or answered (removed). Requests are found by their upstream id
 * (type and value: `7` is not `"7"`) and by the child id they were written under.
 *
 * Guarantees: a request is removed once ({@link take} is true once), so it is answered once;
 * timers of a taken request are cancelled. Does not write anything anywhere.
 */
export class InFlightRequests<C extends object> {
  /** By upstream id itself: a Map tells `7` from `"7"` (and `-0` is `0`, as core's `requestIdKey` has it). */
  readonly #byUpstream = new Map<JsonRpcId, Entry<C>>();
  readonly #byChildId = new Map<number, Entry<C>>();

  public get size(): number {
    return this.#byUpstream.size;
  }

  public has(upstreamId: JsonRpcId): boolean {
    return this.#byUpstream.has(upstreamId);
  }

  public get(upstreamId: JsonRpcId): InFlightRequest<C> | undefined {
    return this.#byUpstream.get(upstreamId);
  }

  /** Records a new unsent request. The caller checked {@link has} first. */
  public add(request: JsonRpcRequest, toolName: string | undefined, receivedAt = 0): InFlightRequest<C> {
    const entry: Entry<C> = {
      upstreamId: request.id,
      request,
      toolName,
      receivedAt,
      sentTo: undefined,
      childId: undefined,
      resent: false,
      timer: undefined,
      fallback: undefined,
    };
    this.#byUpstream.set(request.id, entry);
    return entry;
  }

  /** The request written to `child` under `childId`, if it is still in flight. */
  public sentAs(child: C, childId: unknown): InFlightRequest<C> | undefined {
    if (typeof childId !== 'number') return undefined;
    const entry = this.#byChildId.get(childId);
    return entry?.sentTo === child ? entry : undefined;
  }

  /** `request` was written to `child` as `childId`. */
  public markSent(request: InFlightRequest<C>, child: C, childId: number): void {
    const entry = this.#entry(request);
    if (!entry) return;
    if (entry.childId !== undefined) this.#byChildId.delete(entry.childId);
    entry.sentTo = child;
    entry.childId = childId;
    this.#byChildId.set(childId, entry);
  }

  /** Decides (and records) what happens to `request` now that `child` is the live child. */
  public redeliveryTo(
    request: InFlightRequest<C>,
    child: C,
    safeToResend: (request: InFlightRequest<C>) => boolean,
  ): Redelivery {
    const entry = this.#entry(request);
    if (!entry || entry.sentTo === child) return 'keep';
    if (entry.sentTo === undefined) return 'send';
    if (entry.resent || !safeToResend(entry)) return 'outcome-unknown';
    entry.resent = true;
    return 'send';
  }

  /** Removes `request` and cancels its timers; `true` the first time only (the caller answers it then). */
  public take(request: InFlightRequest<C>): boolean {
    const entry = this.#entry(request);
    if (!entry) return false;
    this.#byUpstream.delete(entry.upstreamId);
    if (entry.childId !== undefined && this.#byChildId.get(entry.childId) === entry)
      this.#byChildId.delete(entry.childId);
    entry.timer?.cancel();
    entry.timer = undefined;
    entry.fallback?.cancel();
    entry.fallback = undefined;
    return true;
  }

  /** A snapshot of the requests in flight, oldest first. */
  public all(): readonly InFlightRequest<C>[] {
    return [...this.#byUpstream.values()];
  }

  #entry(request: InFlightRequest<C>): Entry<C> | undefined {
    const entry = this.#byUpstream.get(request.upstreamId);
    return entry === request ? entry : undefined;
  }
}
