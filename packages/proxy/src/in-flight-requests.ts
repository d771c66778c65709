import type { JsonRpcId, JsonRpcRequest } from '@nteract-mcp/core';
import { IdSlots } from './id-slots.js';

/** Methods safe to send again after the child died with them unanswered: they change nothing. */
export const readMethods: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  // A task is the daemon's: any child answers for it.
  'tasks/get',
  'tasks/result',
  'tasks/list',
]);

/**
 * Methods that change something, but the same however often they are sent (a subscription):
 * safe to send again after the child died with them unanswered, like the reads.
 */
export const idempotentMethods: ReadonlySet<string> = new Set([
  'resources/subscribe',
  'resources/unsubscribe',
  // Cancelling a task twice, or answering its input twice (the second is ignored), is once.
  'tasks/cancel',
  'tasks/update',
]);

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
  /** The requests in flight added just before and just after it (the ledger's order); cleared once it is taken. */
  older: Entry<C> | undefined;
  newer: Entry<C> | undefined;
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
 * Whole-number ids (all child ids, and a client's ids as clients number them) are kept in
 * {@link IdSlots}, which do not reallocate as requests come and go; others (strings) in a `Map`.
 * The order of the requests is a list through the entries themselves.
 *
 * Guarantees: a request is removed once ({@link take} is true once), so it is answered once;
 * timers of a taken request are cancelled. Does not write anything anywhere.
 */
export class InFlightRequests<C extends object> {
  /** By a whole-number upstream id (`-0` is `0`, as core's `requestIdKey` has it). */
  readonly #byNumber = new IdSlots<Entry<C>>();
  /** By any other upstream id (a string, a fraction): a Map tells `7` from `"7"`. */
  readonly #byOtherId = new Map<JsonRpcId, Entry<C>>();
  readonly #byChildId = new IdSlots<Entry<C>>();
  #oldest: Entry<C> | undefined;
  #newest: Entry<C> | undefined;
  #size = 0;

  public get size(): number {
    return this.#size;
  }

  public has(upstreamId: JsonRpcId): boolean {
    return this.#find(upstreamId) !== undefined;
  }

  public get(upstreamId: JsonRpcId): InFlightRequest<C> | undefined {
    return this.#find(upstreamId);
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
      older: this.#newest,
      newer: undefined,
    };
    if (isSlotId(request.id)) this.#byNumber.set(request.id, entry);
    else this.#byOtherId.set(request.id, entry);
    if (this.#newest) this.#newest.newer = entry;
    else this.#oldest = entry;
    this.#newest = entry;
    this.#size += 1;
    return entry;
  }

  /** The request written to `child` under `childId`, if it is still in flight. */
  public sentAs(child: C, childId: unknown): InFlightRequest<C> | undefined {
    if (!isSlotId(childId)) return undefined;
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
    if (isSlotId(entry.upstreamId)) this.#byNumber.delete(entry.upstreamId);
    else this.#byOtherId.delete(entry.upstreamId);
    if (entry.childId !== undefined && this.#byChildId.get(entry.childId) === entry)
      this.#byChildId.delete(entry.childId);
    this.#unlink(entry);
    entry.timer?.cancel();
    entry.timer = undefined;
    entry.fallback?.cancel();
    entry.fallback = undefined;
    return true;
  }

  /** A snapshot of the requests in flight, oldest first. */
  public all(): readonly InFlightRequest<C>[] {
    const all: InFlightRequest<C>[] = [];
    for (let entry = this.#oldest; entry !== undefined; entry = entry.newer) all.push(entry);
    return all;
  }

  #find(upstreamId: JsonRpcId): Entry<C> | undefined {
    return isSlotId(upstreamId) ? this.#byNumber.get(upstreamId) : this.#byOtherId.get(upstreamId);
  }

  #entry(request: InFlightRequest<C>): Entry<C> | undefined {
    const entry = this.#find(request.upstreamId);
    return entry === request ? entry : undefined;
  }

  /** Takes `entry` out of the order, and its links out of it: a taken entry keeps no other request alive. */
  #unlink(entry: Entry<C>): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.#oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
    this.#size -= 1;
  }
}

/** An id the slots take: a safe integer. */
function isSlotId(id: unknown): id is number {
  return Number.isSafeInteger(id);
}
