import { defineToken, type SecretToken, type Subscription } from '@nteract-mcp/core';

/** An nbformat 4 notebook as the contents API gives and takes it (`cells`, `metadata`, `nbformat`, …). */
/** The `code` of the `CoreError` for a server that refused the credentials (HTTP 401/403). */
export const unauthorizedErrorCode = 'unauthorized';

export type NotebookJson = Record<string, unknown> & { cells: Record<string, unknown>[] };

/** A notebook file read through the contents API. */
export interface ServerNotebookFile {
  readonly path: string;
  readonly content: NotebookJson;
  /** The server's `last_modified` of the file when it was read. */
  readonly lastModified: string;
}

/** The server-side session of a notebook path and the kernel it runs. */
export interface ServerSession {
  readonly sessionId: string;
  readonly kernelId: string;
  /** `true` when this call started the session (and so a new kernel); `false` when it found one. */
  readonly started: boolean;
}

/** One message a kernel sent for an execution (iopub): its `msg_type` and `content`. */
export interface KernelMessage {
  readonly msgType: string;
  readonly content: Readonly<Record<string, unknown>>;
}

/** How a kernel execution ended (from its `execute_reply`). */
export interface KernelExecutionReply {
  readonly status: 'ok' | 'error' | 'aborted';
  readonly executionCount: number | null;
}

/** How one execution is asked of the kernel. */
export interface KernelExecuteOptions {
  /**
   * Jupyter's `store_history` (default `true`). `false` for a scratch run: the kernel keeps no
   * history of it and its execution count does not grow.
   */
  readonly storeHistory?: boolean;
}

/**
 * The kernel websocket of one kernel. `status` is the kernel's last reported status (`idle`,
 * `busy`, `starting`, `restarting`, `autorestarting`, `dead`, `unknown`).
 */
export interface ServerKernelConnection {
  readonly kernelId: string;
  readonly status: string;
  /** Resolves once the websocket is open and the kernel answered (`kernel_info`); rejects when it cannot be reached. */
  ready(): Promise<void>;
  onStatus(listener: (status: string) => void): Subscription;
  /** Fires once when the websocket is lost (the server went away, or the kernel is gone). */
  onConnectionLost(listener: (reason: string) => void): Subscription;
  /** Runs `code`, passing each iopub message of it to `onMessage`, and resolves with the reply. */
  execute(
    code: string,
    onMessage: (message: KernelMessage) => void,
    options?: KernelExecuteOptions,
  ): Promise<KernelExecutionReply>;
  interrupt(): Promise<void>;
  /** Restarts the kernel (its state is gone) and resolves once it is back. */
  restart(): Promise<void>;
  /** Closes the websocket; the kernel keeps running on the server. */
  dispose(): void;
}

/**
 * What the hosted plugin needs of one Jupyter Server (a base URL and its token): the contents
 * API, the sessions API and the kernel websocket. One adapter talks to a real server through
 * `@jupyterlab/services`; tests use an in-memory fake.
 *
 * Errors are `CoreError`s: `notebookUnavailable` when the path does not exist, `daemonUnavailable`
 * when the server cannot be reached or refuses (transient), `invalidRequest` for other refusals.
 * No message carries the token.
 */
export interface JupyterServerPort {
  /** The server's base URL (no credentials). */
  readonly serverUrl: string;
  getNotebook(path: string): Promise<ServerNotebookFile>;
  /** The file's `last_modified` now, or `undefined` when it does not exist. */
  lastModified(path: string): Promise<string | undefined>;
  /** Writes the notebook; resolves with the new `last_modified`. */
  saveNotebook(path: string, content: NotebookJson): Promise<string>;
  /** Creates a new untitled notebook in `directory` (server path, `''` for the root); resolves with its path. */
  createUntitledNotebook(directory: string): Promise<string>;
  /** The session for `path` if the server has one (its kernel kept), else a new one with a `kernelName` kernel. */
  findOrStartSession(path: string, kernelName: string): Promise<ServerSession>;
  /** Whether the server still runs the kernel (`GET api/kernels/<id>`): `false` once it was shut down (culled, or from elsewhere). */
  kernelExists(kernelId: string): Promise<boolean>;
  /** Opens the kernel's websocket (not yet ready: see {@link ServerKernelConnection.ready}). */
  connectKernel(kernelId: string): Promise<ServerKernelConnection>;
  /** Closes whatever this port holds open (not the server's sessions). */
  dispose(): void;
}

/** Where a {@link JupyterServerPort} connects to. */
export interface JupyterServerAddress {
  /** Base URL ending in `/`, without credentials. */
  readonly serverUrl: string;
  readonly token: SecretToken | undefined;
}

/** Opens {@link JupyterServerPort}s: the `@jupyterlab/services` adapter in production, a fake in tests. */
export interface JupyterServerConnector {
  open(address: JupyterServerAddress): JupyterServerPort;
}

export const JupyterServerConnector = defineToken<JupyterServerConnector>('plugin-hosted', 'JupyterServerConnector');
