import { defineToken } from '../di/define-token.js';
import type { DaemonIncarnation } from '../notebook-target/daemon-incarnation.js';
import type { KernelInfo } from './kernel-info.js';
import type { ListedNotebook } from './listed-notebook.js';
import type { NotebookHandle, Subscription } from './notebook-handle.js';

/** What a live daemon says about itself. */
export interface DaemonInfo {
  readonly incarnation: DaemonIncarnation;
  readonly version: string;
  readonly protocolVersion: number;
}

/**
 * The answer to an identity query: a live daemon, or confirmed absence (no socket, connection
 * refused). A query that fails in any other way rejects with `daemonQueryFailed` instead, which
 * is not proof of loss.
 */
export type DaemonObservation =
  | { readonly kind: 'live'; readonly info: DaemonInfo }
  | { readonly kind: 'absent'; readonly reason: string };

/**
 * A wake-up for the watch loop. Events are hints, not state: the watcher queries the daemon
 * directly after each one. `lagged` means deliveries were dropped and a fresh observation is needed.
 */
export type DaemonEvent =
  | { readonly kind: 'connected'; readonly info: DaemonInfo }
  | { readonly kind: 'heartbeat'; readonly info: DaemonInfo }
  | {
      readonly kind: 'disconnected';
      readonly reason: string;
      /** The daemon announced its shutdown (a deliberate stop, e.g. for an upgrade), as opposed to a crash. */
      readonly announced?: boolean;
    }
  | { readonly kind: 'lagged'; readonly missed: number };

export interface PeerOptions {
  /** How this peer appears to others in the room (client title + `agent:<slug>:<session>`). */
  readonly peerLabel: string;
}

export interface CreateNotebookOptions extends PeerOptions {
  /** The kernel's language (`python`, `r`, ...) when `kernel` is not given; default Python. */
  readonly runtime?: string;
  /** The kernelspec to run (see {@link DaemonPort.listKernels}); default `python3`. */
  readonly kernel?: string;
  readonly workingDir: string;
  /** Ephemeral notebooks leave no trace once their room is gone. */
  readonly ephemeral: boolean;
}

/** The daemon's live page, as {@link DaemonPort.page} gives it. */
export interface LivePage {
  /** The page's base address on 127.0.0.1: it opens nothing by itself. */
  readonly url: string;
  /**
   * An address that opens the page once, within an hour (its launch code in the fragment); a new
   * one each time. `undefined` from a daemon older than launch addresses.
   */
  readonly launchUrl: string | undefined;
}

/**
 * The local daemon as the child sees it.
 *
 * Guarantees: `queryInfo` asks the daemon itself (never a cached heartbeat); `attachNotebook` is
 * attach-only and rejects with `notebookUnavailable` when the daemon definitively has no such
 * notebook (nothing is created), or `daemonUnavailable` when it cannot be asked now; handles
 * carry the incarnation they were opened on.
 * Does not guarantee: event delivery (events may be dropped or reported as `lagged`), that a
 * notebook stays available after a successful attach, or an atomic check-and-load inside the daemon.
 */
export interface DaemonPort {
  queryInfo(): Promise<DaemonObservation>;
  subscribe(listener: (event: DaemonEvent) => void): Subscription;
  listRooms(): Promise<readonly ListedNotebook[]>;
  /** The Jupyter kernels installed where the daemon runs. */
  listKernels(): Promise<readonly KernelInfo[]>;
  /** Opens (or joins) the room for a notebook file; two opens of one path share one room. */
  openNotebook(path: string, options: PeerOptions): Promise<NotebookHandle>;
  attachNotebook(notebookId: string, options: PeerOptions): Promise<NotebookHandle>;
  createNotebook(options: CreateNotebookOptions): Promise<NotebookHandle>;
  /**
   * The daemon's live page when it serves one (`undefined` when it does not or cannot be asked):
   * `url`, its base address, which opens nothing by itself, and `launchUrl`, a new address that
   * opens the page of `notebookId` (the index without it) once, within an hour. `launchUrl` is
   * `undefined` from a daemon older than launch addresses, which can give no safe address. Give a
   * launch address only to the user who asked.
   */
  page?(notebookId?: string): Promise<LivePage | undefined>;
}

export const DaemonPort = defineToken<DaemonPort>('core', 'DaemonPort');

/**
 * The daemon as `session_status` shows it, asked of the daemon itself: live with its version, pid
 * and start time; absent with why; or `live: 'unknown'` with the error when it cannot be asked
 * now. Never throws.
 */
export async function readDaemonStatus(daemon: Pick<DaemonPort, 'queryInfo'>): Promise<Record<string, unknown>> {
  let observation: DaemonObservation;
  try {
    observation = await daemon.queryInfo();
  } catch (error) {
    return { live: 'unknown', error: error instanceof Error ? error.message : String(error) };
  }
  if (observation.kind === 'absent') return { live: false, reason: observation.reason };
  const { info } = observation;
  return { live: true, version: info.version, pid: info.incarnation.pid, started_at: info.incarnation.startedAt };
}
