import type { Logger } from '@nteract-mcp/foundation';
import {
  cellSourceOf,
  type WireCell,
  type WireRoomCondition,
  type WireRoomConditionKind,
  type WireRoomEvent,
} from '@nteract-mcp/runtimed-protocol';
import { RoomConditions } from './room-conditions.js';

/** Why a room closed under its peers: the daemon stops (rejoin later), or the notebook was shut down. */
export type RoomCloseCause = 'daemon_shutdown' | 'notebook_shutdown';

/** How a peer went: with a `leave` request, or its connection just ended. */
export type PeerDeparture = 'left' | 'vanished';

/**
 * A source edit of a cell as the room hands it to {@link RoomPeers.broadcast}: the cell as the edit
 * left it. Each peer is told it in the form it reads: a `cell_source_set` (the source fields) when it
 * declared `source_edits` (see {@link RoomPeer.readsSourceEdits}), else a `cell_updated` (the whole cell).
 */
export interface SourceEditEvent {
  readonly event: 'source_edit';
  readonly document_version: number;
  readonly cell: WireCell;
}

/** What the room tells its peers: a wire event, or a {@link SourceEditEvent}. */
export type RoomEvent = WireRoomEvent | SourceEditEvent;

/** A connection taking part in a room. */
export interface RoomPeer {
  readonly id: string;
  readonly label: string;
  /**
   * The peer declared `source_edits`: it applies a source edit to its copy of the cell, so it is told
   * one as `cell_source_set` and answered one as `cell_source`, without the cell's outputs.
   */
  readonly readsSourceEdits?: boolean;
  /** The peer declared `comments`: it is told each change of a comment thread (`comment_thread`). */
  readonly readsComments?: boolean;
  send(frame: Readonly<Record<string, unknown>>): void;
  /** Ends the peer's connection because the room is gone; `cause` says whether the whole daemon stops. */
  disconnect(reason: string, cause: RoomCloseCause): void;
}

/** What a room's jobs (file, kernel, executions) tell its peers: events, conditions, notices. */
export interface RoomSignals {
  /** Sends `event` to every peer (but the one `exceptPeerId` names). */
  broadcast(event: WireRoomEvent, exceptPeerId?: string): void;
  /**
   * Sets (a message) or clears (`undefined`) the room's condition of `kind`, broadcasting the whole
   * list to every peer when it changed. Logged at warn when set, info when cleared.
   */
  setCondition(kind: WireRoomConditionKind, message: string | undefined): void;
  hasCondition(kind: WireRoomConditionKind): boolean;
  /** Tells every peer once (their agents hear it with their next answer). */
  notice(message: string): void;
}

/**
 * The peers of one room and what they are told: the connections taking part, the room's
 * conditions (the greeting carries them; changes are broadcast) and the events sent to them all.
 */
export class RoomPeers implements RoomSignals {
  readonly #peers = new Map<string, RoomPeer>();
  /** The cell each peer is on, by peer id (absent: none said yet). */
  readonly #cellOf = new Map<string, string | null>();
  readonly #conditions: RoomConditions;
  readonly #notebookId: string;
  readonly #logger: Logger;

  public constructor(notebookId: string, now: () => number, logger: Logger) {
    this.#notebookId = notebookId;
    this.#conditions = new RoomConditions(now);
    this.#logger = logger;
  }

  public get size(): number {
    return this.#peers.size;
  }

  public add(peer: RoomPeer): void {
    this.#peers.set(peer.id, peer);
  }

  /** Removes the peer `peerId`; the peer, or `undefined` when it was not here. */
  public remove(peerId: string): RoomPeer | undefined {
    const peer = this.#peers.get(peerId);
    if (peer) this.#peers.delete(peerId);
    this.#cellOf.delete(peerId);
    return peer;
  }

  /** Ends every peer's connection (the room is gone) and forgets them. */
  public disconnectAll(reason: string, cause: RoomCloseCause): void {
    for (const peer of this.#peers.values()) peer.disconnect(reason, cause);
    this.#peers.clear();
    this.#cellOf.clear();
  }

  /** The peer `peerId`, else one with the label `label` (the same agent after a restart of its server). */
  public find(peerId: string | undefined, label: string | undefined): RoomPeer | undefined {
    const exact = peerId === undefined ? undefined : this.#peers.get(peerId);
    if (exact || label === undefined) return exact;
    return [...this.#peers.values()].find((peer) => peer.label === label);
  }

  public labels(): string[] {
    return [...this.#peers.values()].map((peer) => peer.label);
  }

  /** Every peer with the cell it is on (`null`: none). */
  public presence(): Array<{ readonly peer: RoomPeer; readonly cellId: string | null }> {
    return [...this.#peers.values()].map((peer) => ({ peer, cellId: this.#cellOf.get(peer.id) ?? null }));
  }

  /**
   * Notes the cell the peer `peerId` is on. `announce`: tell the other peers (a person moving
   * between cells); an agent's place follows from the requests it makes and is not broadcast.
   */
  public setPresence(peerId: string, cellId: string | null, announce: boolean): void {
    const peer = this.#peers.get(peerId);
    if (!peer || this.#cellOf.get(peerId) === cellId) return;
    this.#cellOf.set(peerId, cellId);
    if (announce)
      this.broadcast({ event: 'presence', peer_id: peer.id, peer_label: peer.label, cell_id: cellId }, peerId);
  }

  /** What the room's peers must know now. */
  public conditions(): WireRoomCondition[] {
    return this.#conditions.list();
  }

  public hasCondition(kind: WireRoomConditionKind): boolean {
    return this.#conditions.has(kind);
  }

  public setCondition(kind: WireRoomConditionKind, message: string | undefined): void {
    const changed = message === undefined ? this.#conditions.clear(kind) : this.#conditions.set(kind, message);
    if (!changed) return;
    if (message === undefined) this.#logger.info('room condition cleared', { notebookId: this.#notebookId, kind });
    else this.#logger.warn('room condition', { notebookId: this.#notebookId, kind, message });
    this.broadcast({ event: 'conditions', conditions: this.#conditions.list() });
  }

  public notice(message: string): void {
    this.#logger.info('room notice', { notebookId: this.#notebookId, message });
    this.broadcast({ event: 'notice', message });
  }

  public broadcast(event: RoomEvent, exceptPeerId?: string): void {
    for (const peer of this.#peers.values()) {
      if (peer.id === exceptPeerId) continue;
      peer.send(
        event.event === 'source_edit'
          ? sourceEditBroadcast(event, peer.readsSourceEdits === true)
          : { type: 'broadcast', ...event },
      );
    }
  }
}

/** The broadcast of a source edit to a peer that reads source edits (the source fields), or to one that does not (the whole cell). */
function sourceEditBroadcast(event: SourceEditEvent, readsSourceEdits: boolean): Readonly<Record<string, unknown>> {
  const { document_version } = event;
  const told: WireRoomEvent = readsSourceEdits
    ? { event: 'cell_source_set', document_version, cell: cellSourceOf(event.cell) }
    : { event: 'cell_updated', document_version, cell: event.cell };
  return { type: 'broadcast', ...told };
}
