import { type JsonRpcMessage, type Logger, restoredSubscriptionMetaKey } from '@nteract-mcp/core';
import type { ChildConnection } from './child-connection.js';
import type { UpstreamHandshake } from './upstream-handshake.js';

export interface ClientResourceSubscriptionsOptions {
  /** The client's era: the resources its streams watch, and how a child is given subscriptions. */
  readonly upstream: UpstreamHandshake;
  /** The id for the next message written to a child (unique across children). */
  readonly nextId: () => number;
  readonly logger: Logger;
}

/** The stream a child holds for the client's watched resources and tasks: its id there, and what it names. */
interface ChildStream {
  readonly id: number;
  readonly watched: string;
}

/**
 * The client's resource subscriptions, kept by the proxy across child restarts so that none is
 * dropped when a child dies or is replaced (SIGKILL, exit 75): the legacy era's
 * `resources/subscribe`s a child accepted (learned from its answers; `resources/unsubscribe`
 * answered forgets one), and the resources the native era's `subscriptions/listen` streams watch
 * (the proxy holds those streams itself; the era says what they name), and the tasks those
 * streams watch (`taskIds`: status notifications of tasks, which any child answers for).
 *
 * Every child, once ready and before the requests waiting for it, is given them all as the era
 * says (legacy: `resources/subscribe` requests; native: one `subscriptions/listen` stream of the
 * proxy's own), marked restored (`restoredSubscriptionMetaKey`): they were made before that child
 * watched anything, so it keeps one whose notebook it has not rejoined yet, and tells one notice
 * per subscription once it has (what changed meanwhile is unknown to it).
 * While a child lives, a change to the client's streams gives it a new stream of the proxy's own
 * naming what they watch now, and cancels the one it replaces (the notices it carried meanwhile
 * reach the client's streams by their URI, at worst twice).
 *
 * Does not guarantee that a child accepts what it is given (a refusal is logged), nor anything
 * for subscriptions the client made while no child was ready to answer them (those requests wait
 * for a child like any other).
 */
export class ClientResourceSubscriptions {
  readonly #options: ClientResourceSubscriptionsOptions;
  /** Legacy subscriptions a child accepted, by URI. */
  readonly #accepted = new Set<string>();
  /** Children that were given the subscriptions (only those follow later changes). */
  readonly #given = new WeakSet<ChildConnection>();
  readonly #streams = new WeakMap<ChildConnection, ChildStream>();

  public constructor(options: ClientResourceSubscriptionsOptions) {
    this.#options = options;
  }

  /** The URIs subscribed now, in either era, sorted. */
  public get uris(): readonly string[] {
    return [...new Set([...this.#accepted, ...this.#options.upstream.watchedResources()])].sort();
  }

  /**
   * A child's successful answer to the client's `request` went to the client: a
   * `resources/subscribe` is kept from now on, a `resources/unsubscribe` forgotten.
   */
  public answered(request: { readonly method: string; readonly params?: unknown }): void {
    const uri = (request.params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri !== 'string') return;
    if (request.method === 'resources/subscribe') this.#accepted.add(uri);
    else if (request.method === 'resources/unsubscribe') this.#accepted.delete(uri);
  }

  /**
   * `child` is ready: it is given every subscription, restored (each was made before this child
   * watched anything, so what changed since is unknown to it).
   */
  public giveTo(child: ChildConnection): void {
    this.#given.add(child);
    const uris = this.uris;
    const taskIds = this.#options.upstream.watchedTasks();
    if (uris.length === 0 && taskIds.length === 0) return;
    this.#options.logger.info('giving the child the client resource subscriptions', {
      count: uris.length,
      tasks: taskIds.length,
    });
    this.#send(child, uris, taskIds, { [restoredSubscriptionMetaKey]: true });
  }

  /** The client's streams changed (one opened or was cancelled): the live child, if given them, follows. */
  public streamsChanged(child: ChildConnection | undefined): void {
    if (!child || !this.#given.has(child) || !child.writable) return;
    const uris = this.#options.upstream.watchedResources();
    const taskIds = this.#options.upstream.watchedTasks();
    const none = uris.length === 0 && taskIds.length === 0;
    const previous = this.#streams.get(child);
    if ((previous?.watched ?? '') === JSON.stringify([uris, taskIds]) || (!previous && none)) return;
    if (!none) this.#send(child, uris, taskIds, {});
    if (previous) {
      if (none) this.#streams.delete(child);
      child.write({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: previous.id, reason: "the client's subscriptions changed" },
      } as JsonRpcMessage);
    }
  }

  #send(
    child: ChildConnection,
    uris: readonly string[],
    taskIds: readonly string[],
    meta: Readonly<Record<string, unknown>>,
  ): void {
    const { upstream, nextId, logger } = this.#options;
    for (const message of upstream.subscriptionReplay(uris, meta, taskIds)) {
      const params = upstream.requestParams(message.params as Record<string, unknown> | undefined) ?? {};
      if (message.stream) {
        const id = nextId();
        this.#streams.set(child, { id, watched: JSON.stringify([uris, taskIds]) });
        child.write({ jsonrpc: '2.0', id, method: message.method, params } as JsonRpcMessage);
      } else if (message.request) {
        void child.request(message.method, params).then((answer) => {
          if ('error' in answer) {
            logger.warn('the child refused a subscription it was given', {
              method: message.method,
              error: answer.error,
            });
          }
        });
      }
    }
  }
}
