import type { Clock, Timer } from '@nteract-mcp/foundation';
import type { Logger } from '../../ports/logger.js';
import type { NotebookCellChange, NotebookHandle, Subscription } from '../../ports/notebook-handle.js';
import type { SessionSlot } from '../../session/session-slot.js';
import {
  cellResourceUri,
  type NotebookResources,
  notebookResourceUri,
  parseNotebookResourceUri,
} from './notebook-resources.js';

/** At most one `notifications/resources/updated` per resource (and one list change) in this many milliseconds. */
export const resourceNoticeIntervalMs = 100;

/** What {@link ResourceSubscriptions} sends to the client. */
export interface ResourceNoticeSink {
  /** `notifications/resources/updated` for `uri`. */
  updated(uri: string): void;
  /** `notifications/resources/list_changed` (the active notebook's cells came or went). */
  listChanged(): void;
}

export interface ResourceSubscriptionsOptions {
  readonly slot: SessionSlot;
  readonly resources: NotebookResources;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sink: ResourceNoticeSink;
}

/** A notice due for one resource: when the last one left, and the timer of the one that waits. */
interface NoticeState {
  lastSent: number;
  timer: Timer | undefined;
}

/**
 * The client's subscriptions to the child's resources (notebook and cell URIs, see
 * `notebook-resources.ts`) and the notices they get, in both protocol eras: the legacy era's
 * `resources/subscribe` / `resources/unsubscribe` ({@link subscribe}, {@link unsubscribe}) and the
 * native era's `subscriptions/listen` streams naming `resourceSubscriptions` ({@link openStream},
 * {@link closeStream}). A URI is subscribed while either names it.
 *
 * It follows every notebook of the slot (active and parked) through its handle's
 * `onDidChangeCells`: a change to a cell is an `updated` for that cell's URI and for its
 * notebook's URI, when subscribed; a cell inserted into or deleted from the active notebook is a
 * `list_changed` (the active notebook's cells are listed). Notices are coalesced: at most one per
 * URI every {@link resourceNoticeIntervalMs} ms, the first at once, and the last change of a burst
 * always told (a trailing notice at the end of the interval).
 *
 * Across restarts: a subscription restored by the proxy for a new child (marked `restored`) is
 * accepted whether or not its notebook is open here yet, and kept; since nobody can tell what
 * changed while no child watched, each subscribed URI of a notebook gets one notice when a new
 * connection to that notebook enters the slot (a rejoin, a reconnect), and a restored one whose
 * notebook is already open gets it at once. A subscription is never dropped but by the client.
 *
 * Does not guarantee a notice per edit (a burst is one or two notices), nor notices for a
 * notebook whose backend tells no changes (`onDidChangeCells` absent).
 */
export class ResourceSubscriptions {
  readonly #options: ResourceSubscriptionsOptions;
  /** Legacy `resources/subscribe`s. */
  readonly #subscribed = new Set<string>();
  /** Native streams: the URIs each names, by stream id key. */
  readonly #streams = new Map<string, readonly string[]>();
  readonly #notices = new Map<string, NoticeState>();
  #listNotice: NoticeState | undefined;
  /** The handles followed, with their listener. */
  readonly #watched = new Map<NotebookHandle, Subscription>();
  readonly #slotSubscription: Subscription;
  #closed = false;

  public constructor(options: ResourceSubscriptionsOptions) {
    this.#options = options;
    this.#slotSubscription = options.slot.onDidChange(() => this.follow());
    this.follow();
  }

  /** The URIs subscribed now, in either era, sorted. */
  public get uris(): readonly string[] {
    const all = new Set(this.#subscribed);
    for (const uris of this.#streams.values()) for (const uri of uris) all.add(uri);
    return [...all].sort();
  }

  /**
   * Legacy `resources/subscribe`. Throws the resource-not-found error (-32002, `Unknown resource:
   * <uri>`) and subscribes nothing for a URI naming no open notebook or none of its cells; a `restored` one (the proxy
   * giving a new child the client's subscription) needs only the shape of this server's URIs.
   */
  public async subscribe(uri: string, restored: boolean): Promise<void> {
    if (restored) {
      if (!parseNotebookResourceUri(uri)) throw this.#options.resources.unknownResource(uri);
    } else {
      await this.#options.resources.assertExists(uri);
    }
    this.#subscribed.add(uri);
    if (restored) this.noticeIfOpen(uri);
  }

  /** Legacy `resources/unsubscribe`: idempotent for this server's URIs; resource not found (-32002) for any other URI. */
  public unsubscribe(uri: string): void {
    if (!parseNotebookResourceUri(uri)) throw this.#options.resources.unknownResource(uri);
    this.#subscribed.delete(uri);
    this.forgetIfUnsubscribed(uri);
  }

  /**
   * A native stream opened under `streamKey` naming `uris` (its `resourceSubscriptions`). URIs not
   * of this server's shape are kept too (they never change); `restored` as for {@link subscribe}.
   */
  public openStream(streamKey: string, uris: readonly string[], restored: boolean): void {
    this.#streams.set(streamKey, [...uris]);
    if (restored) for (const uri of uris) this.noticeIfOpen(uri);
  }

  /** The native stream `streamKey` ended. */
  public closeStream(streamKey: string): void {
    const uris = this.#streams.get(streamKey);
    if (!uris) return;
    this.#streams.delete(streamKey);
    for (const uri of uris) this.forgetIfUnsubscribed(uri);
  }

  /** Stops following the slot and the handles; pending notices are dropped. */
  public dispose(): void {
    this.#closed = true;
    this.#slotSubscription.dispose();
    for (const subscription of this.#watched.values()) subscription.dispose();
    this.#watched.clear();
    for (const state of this.#notices.values()) state.timer?.cancel();
    this.#notices.clear();
    this.#listNotice?.timer?.cancel();
  }

  private isSubscribed(uri: string): boolean {
    if (this.#subscribed.has(uri)) return true;
    for (const uris of this.#streams.values()) if (uris.includes(uri)) return true;
    return false;
  }

  /** Follows the handles of the slot's sessions now (new ones from now on, gone ones no more). */
  private follow(): void {
    if (this.#closed) return;
    const { slot } = this.#options;
    const handles = new Set(
      [slot.active, ...slot.parked].flatMap((session) => (session === undefined ? [] : [session.handle])),
    );
    for (const [handle, subscription] of this.#watched) {
      if (handles.has(handle)) continue;
      subscription.dispose();
      this.#watched.delete(handle);
    }
    for (const handle of handles) {
      if (this.#watched.has(handle)) continue;
      const subscription = handle.onDidChangeCells?.((change) => this.changed(handle, change));
      this.#watched.set(handle, subscription ?? { dispose: () => undefined });
      // A new connection to the notebook: what changed before it, nobody here saw.
      this.noticeNotebook(handle.notebookId);
    }
  }

  private changed(handle: NotebookHandle, change: NotebookCellChange): void {
    if (this.#closed) return;
    const notebookId = handle.notebookId.toLowerCase();
    for (const uri of [cellResourceUri(notebookId, change.cellId), notebookResourceUri(notebookId)]) {
      if (this.isSubscribed(uri)) this.notice(uri);
    }
    if ((change.kind === 'inserted' || change.kind === 'deleted') && this.#options.slot.active?.handle === handle) {
      this.#listNotice ??= { lastSent: Number.NEGATIVE_INFINITY, timer: undefined };
      this.coalesce(this.#listNotice, () => this.#options.sink.listChanged());
    }
  }

  /** One notice for every subscribed URI of `notebookId` (see the class comment: a new connection). */
  private noticeNotebook(notebookId: string): void {
    const id = notebookId.toLowerCase();
    for (const uri of this.uris) {
      if (parseNotebookResourceUri(uri)?.notebookId === id) this.notice(uri);
    }
  }

  private noticeIfOpen(uri: string): void {
    const address = parseNotebookResourceUri(uri);
    if (address && this.#options.slot.find(address.notebookId)) this.notice(uri);
  }

  private notice(uri: string): void {
    let state = this.#notices.get(uri);
    if (!state) {
      state = { lastSent: Number.NEGATIVE_INFINITY, timer: undefined };
      this.#notices.set(uri, state);
    }
    this.coalesce(state, () => {
      if (this.isSubscribed(uri)) this.#options.sink.updated(uri);
    });
  }

  /** Sends now when the last one left an interval ago; else once, at the end of the interval. */
  private coalesce(state: NoticeState, send: () => void): void {
    if (state.timer) return;
    const { clock, logger } = this.#options;
    const guarded = (): void => {
      state.lastSent = clock.now();
      try {
        send();
      } catch (error) {
        logger.warn('a resource notice could not be sent', { error });
      }
    };
    const wait = state.lastSent + resourceNoticeIntervalMs - clock.now();
    if (wait <= 0) {
      guarded();
      return;
    }
    state.timer = clock.setTimer(wait, () => {
      state.timer = undefined;
      if (!this.#closed) guarded();
    });
  }

  private forgetIfUnsubscribed(uri: string): void {
    if (this.isSubscribed(uri)) return;
    this.#notices.get(uri)?.timer?.cancel();
    this.#notices.delete(uri);
  }
}
