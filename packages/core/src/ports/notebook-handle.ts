import type { Subscription } from '@nteract-mcp/foundation';

export type { Subscription } from '@nteract-mcp/foundation';

import type { OutputsPage } from '@nteract-mcp/output-shaping';
import type { DaemonIncarnation } from '../notebook-target/daemon-incarnation.js';

export type CellType = 'code' | 'markdown' | 'raw';

/** One nbformat 4 output, as Jupyter writes it (`stream`, `display_data`, `execute_result`, `error`). */
export type CellOutput = Readonly<Record<string, unknown>> & { readonly output_type: string };

export interface NotebookCell {
  readonly id: string;
  readonly cellType: CellType;
  readonly source: string;
  readonly outputs: readonly CellOutput[];
  readonly executionCount: number | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * Who last inserted the cell or changed its source (a peer label: `human:<name>`,
   * `agent:<slug>:<session>`), when the backend knows.
   */
  readonly editedBy?: string;
  /**
   * The version of its content (type and source, not outputs), when the backend keeps one: a
   * mutation's `expectedVersion` is checked against it.
   */
  readonly version?: string;
}

/** An edit's answer said it replaced another peer's change: who made it, and that version. */
export interface ReplacedEdit {
  readonly by: string;
  readonly version: string;
}

/** A cell as an update left it; `replaced` when the update replaced a change the caller had not seen. */
export interface UpdatedCell extends NotebookCell {
  readonly replaced?: ReplacedEdit;
}

/** What a peer did to a cell (from the notebook's change log). */
export interface CellActivity {
  readonly documentVersion: number;
  /** ISO time. */
  readonly at: string;
  /** The peer label. */
  readonly by: string;
  readonly kind: 'inserted' | 'edited' | 'deleted' | 'moved' | 'cleared' | 'ran';
  readonly cellId: string;
  /** Where the cell is after it (inserted, moved). */
  readonly index?: number;
  /** How a run ended. */
  readonly status?: string;
  /** Made by an undo. */
  readonly undo?: boolean;
}

/**
 * The activities after a cursor, oldest first; `cursor` ends this page (the next `since`);
 * `complete` is false when some after `since` are no longer known (`note` says why).
 */
export interface CellActivityPage {
  readonly cursor: string;
  readonly activities: readonly CellActivity[];
  readonly complete: boolean;
  readonly note?: string;
}

/**
 * How far a connection has come. `document` is `ready` when the notebook is loaded and
 * interactive; `runtime` is `ready` when a kernel answers, `unavailable` when none can be started
 * (with `reason`), `failed` when its kernel was started and did not come up (exited at start, or
 * never answered; with `reason`): the next execution tries again. A handle that exists is not
 * proof of readiness.
 */
export interface NotebookReadiness {
  readonly document: 'pending' | 'ready' | 'failed';
  readonly runtime: 'pending' | 'ready' | 'unavailable' | 'failed';
  readonly reason?: string;
}

/**
 * What `interruptKernel` did: the running execution ended (`interrupted`), nothing was running
 * (`nothing_running`), or it still runs a few seconds after the interrupt (`still_running`: its
 * code ignores the interrupt; only a restart stops it).
 */
export type KernelInterruptOutcome = 'interrupted' | 'nothing_running' | 'still_running';

/** Carried by every mutating call, so a replay after a crash is applied once (see the daemon ledger). */
export interface MutationOptions {
  readonly idempotencyKey?: string;
  /**
   * The cell's version the change was made against: refused (`CoreError` `staleCell`, nothing
   * changed) when the cell has changed since. Backends without versions ignore it.
   */
  readonly expectedVersion?: string;
  /** The cell's version the caller last saw: an update then says when it replaced another's change. */
  readonly seenVersion?: string;
}

export interface InsertCellRequest {
  readonly source: string;
  readonly cellType: CellType;
  /** Position; appended when absent. */
  readonly index?: number;
}

export interface ExecuteOptions extends MutationOptions {
  /** Stop waiting after this long; the execution keeps running and can be read with its id. */
  readonly timeoutMs?: number;
  /** Called with each output as it arrives. */
  readonly onOutput?: (output: CellOutput) => void;
  /** Called once, with the execution's id, when the notebook's owner has accepted it (before its outputs). */
  readonly onStarted?: (executionId: string) => void;
  /**
   * When it aborts, the owner cancels this execution and no other: a queued one never runs, a
   * running one is interrupted. The wait goes on to the end the cancellation brings (or the timeout).
   */
  readonly signal?: AbortSignal;
  /**
   * This peer answers the code's `input()` / `getpass()` ({@link NotebookHandle.onInputRequest});
   * without it `input()` raises in the kernel. Backends that cannot ask ignore it.
   */
  readonly allowInput?: boolean;
  /** Run only when this execution (of the same notebook) ended ok; otherwise it ends `aborted`, not run. */
  readonly runAfter?: string;
}

/** A kernel's `input()` / `getpass()` waiting for a line, in an execution this peer started with `allowInput`. */
export interface InputRequest {
  readonly executionId: string;
  readonly inputId: string;
  readonly cellId: string;
  readonly prompt: string;
  /** `getpass()`: the answer is a secret, never to be stored or logged. */
  readonly password: boolean;
}

export interface ExecutionResult {
  readonly executionId: string;
  readonly cellId: string;
  /** `timeout`: still running when the wait ended; outputs are partial, read the rest with the id. */
  readonly status: 'ok' | 'error' | 'timeout' | 'aborted';
  readonly outputs: readonly CellOutput[];
  readonly executionCount: number | null;
  /** Set when this ran in a new kernel: why the one that ran earlier code is gone (its state with it). */
  readonly kernelNotice?: string;
  /**
   * What is known of an execution that ended without its kernel's word (e.g. `aborted` because the
   * connection to the kernel was lost while it ran: whether the kernel finished it is not known).
   */
  readonly note?: string;
}

/** An execution as the notebook's owner knows it now (it may still be queued or running). */
export interface ExecutionState {
  readonly executionId: string;
  readonly cellId: string;
  readonly status: 'queued' | 'running' | 'ok' | 'error' | 'aborted';
  readonly outputs: readonly CellOutput[];
  readonly executionCount: number | null;
  /** See {@link ExecutionResult.kernelNotice}. */
  readonly kernelNotice?: string;
  /** See {@link ExecutionResult.note}. */
  readonly note?: string;
}

/** Which page of an execution's outputs (read as one text, an `OutputsDocument`) to read. */
export interface OutputsPageRequest {
  readonly offset: number;
  /** Characters asked for. */
  readonly length: number;
  /** The page is shortened to stay within this many bytes once escaped twice. */
  readonly budgetBytes: number;
}

/** A page of an execution's outputs and the execution's state (its `outputs` empty). */
export interface ExecutionPage {
  readonly state: ExecutionState;
  readonly page: OutputsPage;
}

/** A scratch run's outcome: outputs returned, stored nowhere. `timeout`: still running when the wait ended. */
export interface ScratchRun {
  readonly status: 'ok' | 'error' | 'aborted' | 'timeout';
  readonly outputs: readonly CellOutput[];
  /** See {@link ExecutionResult.kernelNotice}. */
  readonly kernelNotice?: string;
}

export interface SavedNotebook {
  readonly notebookId: string;
  readonly path: string;
}

/**
 * Something about a notebook its agent must know while it lasts (autosave failing, the file gone,
 * a kernel that could not start), as the notebook's owner reports it: a kind (e.g.
 * `autosave_failing`) and the sentence the agent is told.
 */
export interface NotebookCondition {
  readonly kind: string;
  readonly message: string;
  /** When it began (ISO 8601), when the owner says. */
  readonly since?: string;
}

/**
 * One change to a notebook's cells, as the connection that saw it names it: a cell `inserted`,
 * `updated` (its source, type, outputs, execution count or metadata), `deleted`, or `moved`
 * (its place among the others).
 */
export interface NotebookCellChange {
  readonly kind: 'inserted' | 'updated' | 'deleted' | 'moved';
  readonly cellId: string;
}

/** One message of a comment thread; `author` is the peer label of the peer that wrote it. */
export interface CommentMessage {
  readonly id: string;
  readonly author: string;
  readonly text: string;
  /** ISO 8601. */
  readonly at: string;
}

/**
 * The range of a cell's source a thread is on: where it was (`start`..`end`, holding `quote`), and
 * whether that text is still there (`intact`), was found elsewhere (`moved`, at `nowStart`..`nowEnd`)
 * or is gone (`vanished`).
 */
export interface CommentRange {
  readonly start: number;
  readonly end: number;
  readonly quote: string;
  readonly state: 'intact' | 'moved' | 'vanished';
  readonly nowStart?: number;
  readonly nowEnd?: number;
}

/** A thread of comments on a cell, kept beside the notebook (never in its cells or metadata). */
export interface CommentThread {
  readonly id: string;
  readonly cellId: string;
  readonly range?: CommentRange;
  readonly resolved: boolean;
  readonly resolvedBy?: string;
  readonly resolvedAt?: string;
  /** Its cell is no longer in the notebook; the thread is kept. */
  readonly orphaned: boolean;
  readonly messages: readonly CommentMessage[];
}

/** Threads of a notebook as listed; `total` and `resolved` count all of them. */
export interface CommentList {
  readonly threads: readonly CommentThread[];
  readonly total: number;
  readonly resolved: number;
}

/**
 * The comment threads of a notebook, written by this peer: every message's author is this peer's
 * label (the owner takes it from the connection, never from these arguments). A refusal (an
 * unknown cell or thread, a text too long, a bound reached) changes nothing.
 */
export interface NotebookComments {
  /** Starts a thread on a cell (on `range` of its source, character offsets) with its first message. */
  add(
    cellId: string,
    text: string,
    range?: { readonly start: number; readonly end: number },
    options?: MutationOptions,
  ): Promise<CommentThread>;
  reply(threadId: string, text: string, options?: MutationOptions): Promise<CommentThread>;
  resolve(threadId: string): Promise<CommentThread>;
  reopen(threadId: string): Promise<CommentThread>;
  /** The threads (of one cell), oldest first; resolved ones only with `includeResolved`. */
  list(options?: { readonly cellId?: string; readonly includeResolved?: boolean }): Promise<CommentList>;
}

/** Why a handle closed: we closed it, the daemon went away, or the daemon removed the room. */
export type NotebookHandleCloseReason = 'closed' | 'disconnected' | 'room-removed';

/**
 * One peer connection to one notebook (a room of the local daemon, or a hosted notebook).
 *
 * Guarantees: operations act on `notebookId` only; mutations pass their idempotency key to the
 * owner of the notebook; after `close()` or a lost connection every call rejects with
 * `handleClosed` and `onDidClose` has fired exactly once.
 * Does not guarantee: that the notebook is ready (see {@link NotebookReadiness}), that the daemon
 * incarnation it was opened on is still alive, or that an operation rejected by a lost connection
 * did not take effect.
 */
export interface NotebookHandle {
  readonly notebookId: string;
  /** The file backing the notebook, if any (absolute); changes after `save`. */
  readonly notebookPath: string | undefined;
  /** The daemon life this handle was opened on; `undefined` for hosted notebooks. */
  readonly daemonIncarnation: DaemonIncarnation | undefined;
  readonly isClosed: boolean;
  /** The kernel (kernelspec name) the notebook runs in, when its owner says. */
  readonly kernelName?: string;
  /** Why it closed, once it has (`disconnected`: the daemon went away). */
  readonly closedReason: NotebookHandleCloseReason | undefined;
  /**
   * Set while this connection runs on a new kernel that has not yet told the agent so (the
   * kernel that ran earlier code is gone, e.g. a hosted server restarted); cleared once an
   * execution carried it as its `kernelNotice`. Optional: a handle without it never says so here.
   */
  readonly kernelNotice?: string | undefined;
  /**
   * What the agent must know about the notebook now (empty or absent: nothing); kept current by
   * the owner's reports. Optional: a backend that has none leaves it out.
   */
  readonly conditions?: readonly NotebookCondition[];
  /**
   * Hands over, once, what the owner said happened since the last call (the file was reloaded,
   * saving works again, …), oldest first. Optional, like {@link NotebookHandle.conditions}.
   */
  takeNotices?(): readonly string[];

  readiness(): NotebookReadiness;
  /** Resolves when document and runtime have settled (runtime `ready` or `unavailable`); rejects on failure or close. */
  waitUntilReady(signal?: AbortSignal): Promise<NotebookReadiness>;

  listCells(): Promise<readonly NotebookCell[]>;
  /** Rejects with `cellNotFound` for an unknown id. */
  getCell(cellId: string): Promise<NotebookCell>;
  insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell>;
  updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<UpdatedCell>;
  deleteCell(cellId: string, options?: MutationOptions): Promise<void>;
  /** Moves the cell after `afterCellId`, or to the start when it is `undefined`. */
  moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void>;
  clearOutputs(cellId: string, options?: MutationOptions): Promise<void>;
  /**
   * Runs a cell and waits for it, at most `timeoutMs` (then resolves `timeout` with the outputs so
   * far; the execution goes on). A repeated idempotency key returns the first execution's result.
   */
  executeCell(cellId: string, options?: ExecuteOptions): Promise<ExecutionResult>;
  /** The current state of an execution started in this notebook; rejects `invalidRequest` for an unknown id. */
  getExecution(executionId: string): Promise<ExecutionState>;
  /**
   * One page of an execution's outputs, read where they are kept (only the page travels, not every
   * output each time); a page past the end is empty at `offset`, with `total_chars`. `undefined`
   * when the owner answered the outputs instead (an older daemon): page them from
   * {@link getExecution}. Absent on backends that cannot.
   */
  getExecutionPage?(executionId: string, page: OutputsPageRequest): Promise<ExecutionPage | undefined>;
  /**
   * Stops one execution of this notebook, by anyone's id (a task's, after a restart): a queued one
   * never runs (`dequeued`), the running one is interrupted (`interrupted` once it ended;
   * `still_running` when it goes on, the code ignoring the interrupt), a finished one is left alone
   * (`none`). Absent on backends that cannot name an execution to stop.
   */
  cancelExecution?(executionId: string): Promise<'dequeued' | 'interrupted' | 'still_running' | 'none'>;
  /**
   * Calls `listener` with each input request of an execution this peer started with `allowInput`
   * (also one the notebook's owner asks again after this peer took the place of an earlier one of
   * its label); requests that came while nobody listened are given to the first listener.
   * Absent on backends without input.
   */
  onInputRequest?(listener: (request: InputRequest) => void): Subscription;
  /** Answers an input request: the line, or `undefined` (cancelled: the kernel gets an empty line). False when it was no longer waiting. */
  answerInput?(request: InputRequest, value: string | undefined): Promise<boolean>;
  /**
   * Runs `source` in the notebook's kernel without a cell, after what is queued: the document,
   * the kernel's history and execution count stay as they were. Waits at most `timeoutMs` (then
   * `timeout`; the code goes on running; interrupt it with {@link interruptKernel}). Absent on
   * backends that cannot.
   */
  runScratch?(source: string, options?: { readonly timeoutMs?: number }): Promise<ScratchRun>;
  /**
   * A scratch run kept as an execution: queued and answered at once (its id, `cellId` `scratch`);
   * read it with {@link getExecution}, stop it with {@link cancelExecution}. Absent on backends
   * that cannot.
   */
  startScratch?(source: string, options?: { readonly allowInput?: boolean }): Promise<ExecutionState>;
  /** Interrupts the running execution and says whether it ended (see {@link KernelInterruptOutcome}). */
  interruptKernel(): Promise<KernelInterruptOutcome>;
  restartKernel(): Promise<void>;
  /** Saves to `path` (or the bound file). Keeps the notebook id; binds the path. */
  save(path?: string): Promise<SavedNotebook>;

  /**
   * Calls `listener` with every change to the notebook's cells this connection learns of, whoever
   * made it (this peer, another agent, a person, an execution writing outputs), once the handle's
   * own copy shows it: a read from the listener on sees the change. A stretch of changes the
   * connection could not follow one by one (its copy was fetched again) is told as the changes
   * between the two copies; none is left untold while the handle is open.
   *
   * Does not guarantee one call per edit (several edits of one cell between two copies are one
   * `updated`), nor any call after the handle closed (the changes made while no connection was
   * open are nobody's to tell). Optional: a backend that learns of no changes leaves it out, and
   * nothing is ever told about its notebooks.
   */
  onDidChangeCells?(listener: (change: NotebookCellChange) => void): Subscription;
  /**
   * The notebook's version as last known here: it grows with every change any peer makes.
   * Optional: a backend without one leaves it out (then changes are asked for on every call).
   */
  readonly documentVersion?: number;
  /**
   * Counts the changes this connection learned of that it did not make itself, or cannot tell it
   * made (another peer's edit, an undo, a run it does not follow, a list fetched again): it grows
   * before a read or an answer shows such a change, and only with them. While it stays the same,
   * the change log has nothing of another peer's since (a change note need not ask). Optional: a
   * backend that cannot tell leaves it out (then `documentVersion` says when to ask).
   */
  readonly othersChangeCount?: number;
  /**
   * What the notebook's peers did after the cursor `since` (absent: all that is kept). Absent on
   * backends that keep no change log.
   */
  getChanges?(since?: string): Promise<CellActivityPage>;
  /**
   * Reverts this peer's last `count` edits, newest first, each only when nobody changed that cell
   * since; all or nothing (`CoreError` `undoRefused` saying why). Absent on backends without undo.
   */
  undo?(count: number, options?: MutationOptions): Promise<readonly CellActivity[]>;
  /**
   * The notebook's comment threads (see {@link NotebookComments}); what another peer does to them
   * is told once among the {@link takeNotices}. Absent on backends that keep no comments.
   */
  readonly comments?: NotebookComments;

  /** Releases this peer. Idempotent. Other peers of the room are untouched. */
  close(): Promise<void>;
  onDidClose(listener: (reason: NotebookHandleCloseReason) => void): Subscription;
}
