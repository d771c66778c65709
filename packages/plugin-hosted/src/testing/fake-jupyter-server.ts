import { CoreError, type Subscription } from '@nteract-mcp/core';
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
} from '../jupyter-server-port.js';

interface FakeFile {
  content: NotebookJson;
  lastModified: string;
}

interface FakeKernel {
  readonly id: string;
  readonly name: string;
  /** The kernel's variables (what `x = 41` sets). */
  readonly namespace: Map<string, number>;
  executionCount: number;
}

/**
 * An in-memory Jupyter Server behind {@link JupyterServerConnector}: files with `last_modified`,
 * sessions by path, kernels that understand `name = <int>` and `print(name + <int>)` (a
 * `NameError` for an unknown name) or send the messages scripted for a code
 * ({@link FakeJupyterServer.scripted}), a token it checks, and faults: {@link FakeJupyterServer.stop}
 * (every websocket is lost, every call fails as unreachable until {@link FakeJupyterServer.start}),
 * {@link FakeJupyterServer.restart} (sessions and kernels gone, files kept), and edits made "on the
 * server" ({@link FakeJupyterServer.writeFile}).
 */
export class FakeJupyterServer implements JupyterServerConnector {
  public readonly files = new Map<string, FakeFile>();
  public readonly sessions = new Map<string, { readonly sessionId: string; readonly kernel: FakeKernel }>();
  /** Every address a port was opened for (to check tokens reach the server). */
  public readonly opened: JupyterServerAddress[] = [];
  public startedSessions = 0;
  /** Every execution asked of a kernel, in order: its code and whether it was to be kept in the history. */
  public readonly executed: { readonly code: string; readonly storeHistory: boolean }[] = [];
  /** Code whose execution, after its first message (scripted), waits for this promise before it ends (a long run). */
  public readonly held = new Map<string, Promise<void>>();
  /** Code whose execution sends exactly these kernel messages, then ends `ok` (any other message shape). */
  public readonly scripted = new Map<string, readonly KernelMessage[]>();
  #up = true;
  #heldSaves: (() => void)[] | undefined;
  #clock = 0;
  #ids = 0;
  readonly #connections = new Set<FakeKernelConnection>();

  /** The `code` of the error a call gets while the server is stopped (e.g. a JupyterHub's `hub_server_not_running`). */
  public downCode: string | undefined;

  /**
   * The error a call with `address` gets while the server is stopped, when it is not the one
   * {@link FakeJupyterServer.downCode} makes (a JupyterHub answers "not found" to the token of a
   * user it does not let see the server). `undefined`: that one.
   */
  public whileDown: ((address: JupyterServerAddress) => CoreError | undefined) | undefined;

  public constructor(public readonly token: string | undefined = 'fake-token') {}

  public get isUp(): boolean {
    return this.#up;
  }

  /** From now on a save waits until {@link FakeJupyterServer.releaseSaves} (to act while one is in flight). */
  public holdSaves(): void {
    this.#heldSaves ??= [];
  }

  /** Lets the held saves go on, and stops holding. */
  public releaseSaves(): void {
    const held = this.#heldSaves ?? [];
    this.#heldSaves = undefined;
    for (const release of held) release();
  }

  /** Saves waiting for {@link FakeJupyterServer.releaseSaves}. */
  public get heldSaves(): number {
    return this.#heldSaves?.length ?? 0;
  }

  /** @internal */
  public saveGate(): Promise<void> {
    const held = this.#heldSaves;
    return held ? new Promise((resolve) => held.push(resolve)) : Promise.resolve();
  }

  public open(address: JupyterServerAddress): JupyterServerPort {
    this.opened.push(address);
    return new FakeServerPort(this, address);
  }

  /** Writes a file as another client of the server would (a new `last_modified`). */
  public writeFile(path: string, content: NotebookJson): void {
    this.files.set(path, { content: structuredClone(content), lastModified: this.tick() });
  }

  public file(path: string): NotebookJson | undefined {
    return this.files.get(path)?.content;
  }

  /** The server goes away: websockets are lost, calls fail until {@link FakeJupyterServer.start}. */
  public stop(): void {
    this.#up = false;
    for (const connection of [...this.#connections]) connection.lose('the kernel websocket closed');
  }

  public start(): void {
    this.#up = true;
  }

  /** The server shuts down the kernel of `path` (idle culling): its session goes with it; websockets stay open, as a real server leaves them. */
  public cull(path: string): void {
    this.sessions.delete(path);
  }

  /**
   * The kernel of `path` is restarted from another client (the classic notebook's Kernel menu, a
   * REST call): its variables are gone, and the websockets see the new process's `starting`, then
   * `idle`, with no `restarting` before.
   */
  public restartKernelElsewhere(path: string): void {
    const kernel = this.sessions.get(path)?.kernel;
    if (!kernel) throw new Error(`no session for ${path}`);
    kernel.namespace.clear();
    kernel.executionCount = 0;
    for (const connection of [...this.#connections]) {
      if (connection.kernelId === kernel.id) connection.restartedElsewhere();
    }
  }

  /** Stopped and started again: files kept, sessions and kernels gone. */
  public restart(): void {
    this.stop();
    this.sessions.clear();
    this.start();
  }

  /** @internal */
  public tick(): string {
    this.#clock += 1;
    return new Date(Date.UTC(2026, 0, 1, 0, 0, 0, this.#clock)).toISOString();
  }

  /** @internal */
  public nextId(prefix: string): string {
    this.#ids += 1;
    return `${prefix}-${this.#ids}`;
  }

  /** @internal */
  public check(address: JupyterServerAddress): void {
    if (!this.#up) {
      const answer = this.whileDown?.(address);
      if (answer) throw answer;
      throw new CoreError(
        'daemonUnavailable',
        `the Jupyter Server at ${address.serverUrl} does not answer.`,
        this.downCode === undefined ? undefined : { code: this.downCode },
      );
    }
    if (this.token !== undefined && address.token?.reveal() !== this.token) {
      throw new CoreError(
        'daemonUnavailable',
        `the Jupyter Server at ${address.serverUrl} refused the credentials (HTTP 403).`,
        { code: unauthorizedErrorCode },
      );
    }
  }

  /** @internal */
  public track(connection: FakeKernelConnection): void {
    this.#connections.add(connection);
  }

  /** @internal */
  public untrack(connection: FakeKernelConnection): void {
    this.#connections.delete(connection);
  }

  /** @internal */
  public kernelById(id: string): FakeKernel | undefined {
    for (const session of this.sessions.values()) if (session.kernel.id === id) return session.kernel;
    return undefined;
  }
}

class FakeServerPort implements JupyterServerPort {
  public readonly serverUrl: string;

  public constructor(
    private readonly server: FakeJupyterServer,
    private readonly address: JupyterServerAddress,
  ) {
    this.serverUrl = address.serverUrl;
  }

  public async getNotebook(path: string): Promise<ServerNotebookFile> {
    this.server.check(this.address);
    const file = this.server.files.get(path);
    if (!file) throw new CoreError('notebookUnavailable', `Could not read ${path}: not found on ${this.serverUrl}.`);
    return { path, content: structuredClone(file.content), lastModified: file.lastModified };
  }

  public async lastModified(path: string): Promise<string | undefined> {
    this.server.check(this.address);
    // The root directory is always there.
    return path === '' ? new Date(Date.UTC(2026, 0, 1)).toISOString() : this.server.files.get(path)?.lastModified;
  }

  public async saveNotebook(path: string, content: NotebookJson): Promise<string> {
    this.server.check(this.address);
    await this.server.saveGate();
    this.server.writeFile(path, content);
    return this.server.files.get(path)?.lastModified as string;
  }

  public async createUntitledNotebook(directory: string): Promise<string> {
    this.server.check(this.address);
    let n = 0;
    const name = (): string => `${directory ? `${directory}/` : ''}Untitled${n === 0 ? '' : n}.ipynb`;
    while (this.server.files.has(name())) n += 1;
    const path = name();
    this.server.writeFile(path, { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 });
    return path;
  }

  public async findOrStartSession(path: string, kernelName: string): Promise<ServerSession> {
    this.server.check(this.address);
    const found = this.server.sessions.get(path);
    if (found) return { sessionId: found.sessionId, kernelId: found.kernel.id, started: false };
    const kernel: FakeKernel = {
      id: this.server.nextId('kernel'),
      name: kernelName,
      namespace: new Map(),
      executionCount: 0,
    };
    const sessionId = this.server.nextId('session');
    this.server.sessions.set(path, { sessionId, kernel });
    this.server.startedSessions += 1;
    return { sessionId, kernelId: kernel.id, started: true };
  }

  public async connectKernel(kernelId: string): Promise<ServerKernelConnection> {
    return new FakeKernelConnection(this.server, this.address, kernelId);
  }

  public async kernelExists(kernelId: string): Promise<boolean> {
    this.server.check(this.address);
    return this.server.kernelById(kernelId) !== undefined;
  }

  public dispose(): void {}
}

class FakeKernelConnection implements ServerKernelConnection {
  public status = 'starting';
  readonly #status = new Set<(status: string) => void>();
  readonly #lost = new Set<(reason: string) => void>();
  #lostReason: string | undefined;
  #disposed = false;

  public constructor(
    private readonly server: FakeJupyterServer,
    private readonly address: JupyterServerAddress,
    public readonly kernelId: string,
  ) {
    server.track(this);
  }

  public async ready(): Promise<void> {
    this.server.check(this.address);
    if (!this.server.kernelById(this.kernelId)) {
      throw new CoreError('daemonUnavailable', `Could not reach the kernel: kernel ${this.kernelId} not found`);
    }
    this.setStatus('idle');
  }

  public onStatus(listener: (status: string) => void): Subscription {
    this.#status.add(listener);
    return { dispose: () => this.#status.delete(listener) };
  }

  public onConnectionLost(listener: (reason: string) => void): Subscription {
    if (this.#lostReason !== undefined) {
      listener(this.#lostReason);
      return { dispose: () => undefined };
    }
    this.#lost.add(listener);
    return { dispose: () => this.#lost.delete(listener) };
  }

  public async execute(
    code: string,
    onMessage: (message: KernelMessage) => void,
    options: KernelExecuteOptions = {},
  ): Promise<KernelExecutionReply> {
    const kernel = this.server.kernelById(this.kernelId);
    if (!kernel || this.#lostReason !== undefined) return { status: 'aborted', executionCount: null };
    const storeHistory = options.storeHistory ?? true;
    this.server.executed.push({ code, storeHistory });
    // As Jupyter's kernels do: a run kept out of the history does not count.
    if (storeHistory) kernel.executionCount += 1;
    const executionCount = storeHistory ? kernel.executionCount : null;
    const script = this.server.scripted.get(code);
    if (script) {
      const [first, ...rest] = script;
      if (first) onMessage(first);
      await this.server.held.get(code);
      for (const message of rest) onMessage(message);
      return { status: 'ok', executionCount };
    }
    for (const line of code.split('\n').filter((text) => text.trim() !== '')) {
      const assignment = /^(\w+)\s*=\s*(-?\d+)$/.exec(line.trim());
      if (assignment) {
        kernel.namespace.set(assignment[1] as string, Number(assignment[2]));
        continue;
      }
      const print = /^print\((\w+)\s*\+\s*(-?\d+)\)$/.exec(line.trim());
      const value = print ? kernel.namespace.get(print[1] as string) : undefined;
      if (print && value !== undefined) {
        onMessage({ msgType: 'stream', content: { name: 'stdout', text: `${value + Number(print[2])}\n` } });
        continue;
      }
      const name = print?.[1] ?? line.trim();
      onMessage({
        msgType: 'error',
        content: { ename: 'NameError', evalue: `name '${name}' is not defined`, traceback: [] },
      });
      return { status: 'error', executionCount };
    }
    return { status: 'ok', executionCount };
  }

  public async interrupt(): Promise<void> {
    this.server.check(this.address);
  }

  public async restart(): Promise<void> {
    this.server.check(this.address);
    const kernel = this.server.kernelById(this.kernelId);
    kernel?.namespace.clear();
    this.setStatus('restarting');
    this.setStatus('idle');
  }

  public dispose(): void {
    this.#disposed = true;
    this.server.untrack(this);
  }

  /** @internal What a websocket sees of a restart it did not ask for. */
  public restartedElsewhere(): void {
    this.setStatus('starting');
    this.setStatus('idle');
  }

  /** @internal */
  public lose(reason: string): void {
    if (this.#disposed || this.#lostReason !== undefined) return;
    this.#lostReason = reason;
    this.server.untrack(this);
    for (const listener of [...this.#lost]) listener(reason);
  }

  private setStatus(status: string): void {
    this.status = status;
    for (const listener of [...this.#status]) listener(status);
  }
}
