import { basename } from 'node:path';
import type {
  ContentsManager,
  KernelConnection,
  KernelMessage as LabKernelMessage,
  ServerConnection,
} from '@jupyterlab/services';
import { CoreError, type Logger, type Subscription } from '@nteract-mcp/core';
import type WebSocket from 'ws';
import {
  type JupyterServerAddress,
  type JupyterServerConnector,
  type JupyterServerPort,
  type KernelExecuteOptions,
  type KernelExecutionReply,
  type KernelMessage,
  type NotebookJson,
  type ServerKernelConnection,
  type ServerNotebookFile,
  type ServerSession,
  unauthorizedErrorCode,
} from './jupyter-server-port.js';
import { hubServerNotRunningCode } from './jupyterhub-api.js';
import { redactCredentials, redactFromLibraryConsole, routeLibraryConsole } from './route-library-console.js';

/** The libraries, loaded on first use (they are heavy; a child that never opens a hosted notebook never loads them). */
interface Library {
  readonly services: typeof import('@jupyterlab/services');
  readonly WebSocket: typeof WebSocket;
}

let library: Promise<Library> | undefined;

function loadLibrary(): Promise<Library> {
  library ??= Promise.all([import('@jupyterlab/services'), import('ws')]).then(([services, ws]) => ({
    services,
    WebSocket: ws.default,
  }));
  return library;
}

/** How long a kernel websocket may take to open and answer `kernel_info`. */
export const kernelConnectTimeoutMs = 30_000;

/**
 * The production {@link JupyterServerConnector}: REST (contents, sessions, kernels) and the kernel
 * websocket through `@jupyterlab/services`, `ws` under it. The token travels only in an
 * `Authorization: token …` header (REST and the websocket upgrade alike), never in a URL, and the
 * library's console output goes to the logger (stderr) with credentials redacted.
 */
export class JupyterlabServicesConnector implements JupyterServerConnector {
  public constructor(private readonly logger: Logger) {}

  public open(address: JupyterServerAddress): JupyterServerPort {
    routeLibraryConsole(this.logger.child('jupyterlab-services'));
    const token = address.token?.reveal() ?? '';
    redactFromLibraryConsole(token);
    return new LazyServer(
      address.serverUrl,
      loadLibrary().then((loaded) => new JupyterlabServicesServer(loaded, address.serverUrl, token, this.logger)),
    );
  }
}

/** A {@link JupyterServerPort} whose calls wait for the libraries to load. */
class LazyServer implements JupyterServerPort {
  #disposed = false;

  public constructor(
    public readonly serverUrl: string,
    private readonly server: Promise<JupyterlabServicesServer>,
  ) {
    server.catch(() => undefined);
  }

  public async getNotebook(path: string): Promise<ServerNotebookFile> {
    return (await this.server).getNotebook(path);
  }

  public async lastModified(path: string): Promise<string | undefined> {
    return (await this.server).lastModified(path);
  }

  public async saveNotebook(path: string, content: NotebookJson): Promise<string> {
    return (await this.server).saveNotebook(path, content);
  }

  public async createUntitledNotebook(directory: string): Promise<string> {
    return (await this.server).createUntitledNotebook(directory);
  }

  public async findOrStartSession(path: string, kernelName: string): Promise<ServerSession> {
    return (await this.server).findOrStartSession(path, kernelName);
  }

  public async kernelExists(kernelId: string): Promise<boolean> {
    return (await this.server).kernelExists(kernelId);
  }

  public async connectKernel(kernelId: string): Promise<ServerKernelConnection> {
    const server = await this.server;
    if (this.#disposed) throw new CoreError('handleClosed', `The connection to ${this.serverUrl} was closed.`);
    return server.connectKernel(kernelId);
  }

  public dispose(): void {
    this.#disposed = true;
    void this.server.then(
      (server) => server.dispose(),
      () => undefined,
    );
  }
}

class JupyterlabServicesServer {
  readonly #settings: ServerConnection.ISettings;
  readonly #contents: ContentsManager;
  readonly #kernels = new Set<LabKernelConnection>();
  #sockets: Set<WebSocket> = new Set();

  readonly #library: Library;

  public constructor(
    library: Library,
    public readonly serverUrl: string,
    token: string,
    private readonly logger: Logger,
  ) {
    this.#library = library;
    const { services } = library;
    const sockets = this.#sockets;
    const header = token === '' ? {} : { Authorization: `token ${token}` };
    // The library's sockets, with the token as a header; each one known, to tell when it is lost.
    class AuthorizedWebSocket extends library.WebSocket {
      public constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols, { headers: header });
        sockets.add(this);
        this.once('close', () => sockets.delete(this));
      }
    }
    this.#settings = services.ServerConnection.makeSettings({
      baseUrl: serverUrl,
      wsUrl: serverUrl.replace(/^http/i, 'ws'),
      token,
      appendToken: false,
      WebSocket: AuthorizedWebSocket as unknown as typeof globalThis.WebSocket,
    });
    this.#contents = new services.ContentsManager({ serverSettings: this.#settings });
  }

  public async getNotebook(path: string): Promise<ServerNotebookFile> {
    const model = await this.call(`read ${path}`, () =>
      this.#contents.get(path, { type: 'notebook', content: true, format: 'json' }),
    );
    const content = model.content as NotebookJson | null;
    if (model.type !== 'notebook' || !content || !Array.isArray(content.cells)) {
      throw new CoreError('invalidRequest', `${path} on ${this.serverUrl} is not a notebook the server can read.`);
    }
    return { path: model.path, content, lastModified: model.last_modified };
  }

  public async lastModified(path: string): Promise<string | undefined> {
    try {
      return (await this.call(`stat ${path}`, () => this.#contents.get(path, { content: false }))).last_modified;
    } catch (error) {
      if (CoreError.is(error, 'notebookUnavailable')) return undefined;
      throw error;
    }
  }

  public async saveNotebook(path: string, content: NotebookJson): Promise<string> {
    const model = await this.call(`save ${path}`, () =>
      this.#contents.save(path, { type: 'notebook', format: 'json', content }),
    );
    return model.last_modified;
  }

  public async createUntitledNotebook(directory: string): Promise<string> {
    const model = await this.call(`create a notebook in '${directory || '/'}'`, () =>
      this.#contents.newUntitled({ path: directory, type: 'notebook' }),
    );
    return model.path;
  }

  public async findOrStartSession(path: string, kernelName: string): Promise<ServerSession> {
    const running = await this.call('list sessions', () =>
      this.#library.services.SessionAPI.listRunning(this.#settings),
    );
    const found = running.find((session) => session.path === path && session.kernel);
    if (found?.kernel) return { sessionId: found.id, kernelId: found.kernel.id, started: false };
    const started = await this.call(`start a '${kernelName}' kernel for ${path}`, () =>
      this.#library.services.SessionAPI.startSession(
        { path, type: 'notebook', name: basename(path), kernel: { name: kernelName } } as Parameters<
          Library['services']['SessionAPI']['startSession']
        >[0],
        this.#settings,
      ),
    );
    if (!started.kernel)
      throw new CoreError('invalidRequest', `The server started a session for ${path} without a kernel.`);
    return { sessionId: started.id, kernelId: started.kernel.id, started: true };
  }

  public async kernelExists(kernelId: string): Promise<boolean> {
    const model = await this.call('read the kernel', () =>
      this.#library.services.KernelAPI.getKernelModel(kernelId, this.#settings),
    );
    return model !== undefined;
  }

  public connectKernel(kernelId: string): ServerKernelConnection {
    const before = new Set(this.#sockets);
    const kernel = new this.#library.services.KernelConnection({
      model: { id: kernelId, name: '' },
      serverSettings: this.#settings,
      handleComms: false,
    });
    const connection: LabKernelConnection = new LabKernelConnection(
      kernel,
      [...this.#sockets].filter((socket) => !before.has(socket)),
      {
        logger: this.logger,
        library: this.#library,
        sockets: this.#sockets,
        onDispose: (): void => {
          this.#kernels.delete(connection);
        },
      },
    );
    this.#kernels.add(connection);
    return connection;
  }

  public dispose(): void {
    for (const kernel of [...this.#kernels]) kernel.dispose();
  }

  /** Runs one REST call; its failure as a {@link CoreError} that names the server, never the token. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toServerError(this.#library, error, what, this.serverUrl);
    }
  }
}

/** The kernel websocket of one kernel through the library's {@link KernelConnection}. */
class LabKernelConnection implements ServerKernelConnection {
  readonly #listeners = { status: new Set<(status: string) => void>(), lost: new Set<(reason: string) => void>() };
  #lost: string | undefined;
  #disposed = false;
  readonly #ready: Promise<void>;

  public constructor(
    private readonly kernel: KernelConnection,
    initialSockets: readonly WebSocket[],
    private readonly options: {
      readonly logger: Logger;
      readonly library: Library;
      readonly sockets: Set<WebSocket>;
      readonly onDispose: () => void;
    },
  ) {
    kernel.statusChanged.connect((_, status) => {
      for (const listener of [...this.#listeners.status]) listener(status);
    });
    // The library reconnects by itself; here a lost websocket is a lost connection (the handle
    // closes, the recovery reaches the notebook again), so its retries are not wanted.
    kernel.connectionStatusChanged.connect((_, status) => {
      if (status !== 'connected' && this.#wasConnected) this.loseConnection('the kernel websocket closed');
    });
    for (const socket of initialSockets) this.watch(socket);
    this.#ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.loseConnection(`the kernel did not answer within ${kernelConnectTimeoutMs / 1000} s`);
      }, kernelConnectTimeoutMs);
      const lost = (reason: string): void => {
        clearTimeout(timer);
        reject(new CoreError('daemonUnavailable', `Could not reach the kernel: ${reason}`));
      };
      this.#listeners.lost.add(lost);
      this.#abandonReady = () => lost('the connection was closed before the kernel answered');
      kernel.info.then(
        () => {
          clearTimeout(timer);
          this.#listeners.lost.delete(lost);
          this.#abandonReady = undefined;
          this.#wasConnected = true;
          resolve();
        },
        (error: unknown) => lost(redactCredentials(String(error))),
      );
    });
    this.#ready.catch(() => undefined);
  }

  #wasConnected = false;
  /** Rejects {@link LabKernelConnection.ready} while it is pending (on dispose). */
  #abandonReady: (() => void) | undefined;

  public get kernelId(): string {
    return this.kernel.id;
  }

  public get status(): string {
    return this.kernel.status;
  }

  public ready(): Promise<void> {
    return this.#ready;
  }

  public onStatus(listener: (status: string) => void): Subscription {
    this.#listeners.status.add(listener);
    return { dispose: () => this.#listeners.status.delete(listener) };
  }

  public onConnectionLost(listener: (reason: string) => void): Subscription {
    if (this.#lost !== undefined) {
      listener(this.#lost);
      return { dispose: () => undefined };
    }
    this.#listeners.lost.add(listener);
    return { dispose: () => this.#listeners.lost.delete(listener) };
  }

  public async execute(
    code: string,
    onMessage: (message: KernelMessage) => void,
    options: KernelExecuteOptions = {},
  ): Promise<KernelExecutionReply> {
    const future = this.kernel.requestExecute({
      code,
      store_history: options.storeHistory ?? true,
      stop_on_error: true,
    });
    future.onIOPub = (message: LabKernelMessage.IIOPubMessage) => {
      onMessage({ msgType: message.header.msg_type, content: message.content as Record<string, unknown> });
    };
    try {
      const reply = (await future.done) as LabKernelMessage.IExecuteReplyMsg;
      const content = reply.content as { status: string; execution_count?: number | null };
      const status = content.status === 'ok' ? 'ok' : content.status === 'error' ? 'error' : 'aborted';
      return { status, executionCount: typeof content.execution_count === 'number' ? content.execution_count : null };
    } catch (error) {
      if (this.#lost !== undefined || this.#disposed) return { status: 'aborted', executionCount: null };
      throw new CoreError('daemonUnavailable', `The execution failed: ${redactCredentials(String(error))}`);
    }
  }

  public async interrupt(): Promise<void> {
    try {
      await this.kernel.interrupt();
    } catch (error) {
      throw toServerError(this.options.library, error, 'interrupt the kernel', this.kernel.serverSettings.baseUrl);
    }
  }

  public async restart(): Promise<void> {
    try {
      await this.kernel.restart();
    } catch (error) {
      throw toServerError(this.options.library, error, 'restart the kernel', this.kernel.serverSettings.baseUrl);
    }
  }

  public dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#abandonReady?.();
    this.#abandonReady = undefined;
    this.options.onDispose();
    this.kernel.dispose();
  }

  private watch(socket: WebSocket): void {
    socket.once('close', () => {
      if (!this.#disposed) this.loseConnection('the kernel websocket closed');
    });
    socket.once('error', (error) =>
      this.options.logger.debug('kernel websocket error', { error: redactCredentials(String(error)) }),
    );
  }

  private loseConnection(reason: string): void {
    if (this.#lost !== undefined || this.#disposed) return;
    this.#lost = reason;
    // The listeners below say why (ready() included); stop the library's own reconnect
    // attempts: recovery reaches the notebook again from scratch.
    this.#abandonReady = undefined;
    this.dispose();
    for (const listener of [...this.#listeners.lost]) listener(reason);
    this.#listeners.lost.clear();
  }
}

/** A failed REST call as a {@link CoreError}: 404 ⇒ `notebookUnavailable`, no answer / 5xx / 401 / 403 ⇒ `daemonUnavailable`. */
function toServerError(library: Library, error: unknown, what: string, serverUrl: string): CoreError {
  const { ServerConnection: Connection } = library.services;
  if (error instanceof Connection.ResponseError) {
    const status = error.response.status;
    if (status === 404) return new CoreError('notebookUnavailable', `Could not ${what}: not found on ${serverUrl}.`);
    if (status === 424) {
      return new CoreError(
        'daemonUnavailable',
        `Could not ${what}: the JupyterHub server at ${serverUrl} is not running (HTTP 424).`,
        { code: hubServerNotRunningCode },
      );
    }
    if (status === 401 || status === 403) {
      return new CoreError(
        'daemonUnavailable',
        `Could not ${what}: the Jupyter Server at ${serverUrl} refused the credentials (HTTP ${status}). Give its current token as ?token=… in the URL (connect_notebook(url="…?token=<token>")) or in JUPYTER_TOKEN.`,
        { code: unauthorizedErrorCode },
      );
    }
    return new CoreError(
      status >= 500 ? 'daemonUnavailable' : 'invalidRequest',
      `Could not ${what}: the Jupyter Server at ${serverUrl} answered HTTP ${status} (${redactCredentials(error.message)}).`,
      { code: `http_${status}` },
    );
  }
  if (error instanceof Connection.NetworkError) {
    return new CoreError(
      'daemonUnavailable',
      `Could not ${what}: the Jupyter Server at ${serverUrl} does not answer.`,
      {
        code: 'server_unreachable',
      },
    );
  }
  if (CoreError.is(error)) return error;
  return new CoreError('daemonUnavailable', `Could not ${what} on ${serverUrl}: ${redactCredentials(String(error))}`);
}
