import { Duplex, PassThrough } from 'node:stream';
import { type CredentialChannelMessage, encodeCredentialMessage } from '../handoff/credential-channel.js';
import type { ChildExit, ChildProcessHandle, ChildProcessPort, ChildSpawnSpec } from '../ports/child-process-port.js';
import { failedChildHandle } from '../ports/failed-child-handle.js';
import { NotModelledError } from './not-modelled-error.js';

/**
 * A child process made of two in-memory pipes. The test reads what the parent wrote
 * ({@link FakeChildProcess.receivedLines}), answers as the child ({@link FakeChildProcess.send}),
 * and ends it ({@link FakeChildProcess.exit}); `kill` ends it with the signal unless
 * `ignoreSignals` is set. Like a stdio MCP server it exits 0 when its stdin ends, unless
 * `ignoreInputEnd` is set. A spec with `credentialChannel` gets an in-memory credential channel:
 * {@link FakeChildProcess.credentialLines} is what the parent wrote to it,
 * {@link FakeChildProcess.sendCredential} writes to the parent.
 */
export class FakeChildProcess implements ChildProcessHandle {
  public readonly stdin = new PassThrough();
  public readonly stdout = new PassThrough();
  public readonly exited: Promise<ChildExit>;
  public readonly credentials: Duplex | undefined;
  public readonly signals: NodeJS.Signals[] = [];
  public ignoreSignals = false;
  /** Set: the end of its stdin does not end it (a child stuck in its shutdown). */
  public ignoreInputEnd = false;
  #exit: ChildExit | undefined;
  #resolveExit!: (exit: ChildExit) => void;
  #received = '';
  #credentialText = '';
  readonly #toParent = new PassThrough();

  public constructor(
    public readonly spec: ChildSpawnSpec,
    public readonly pid: number | undefined,
  ) {
    this.exited = new Promise((resolve) => {
      this.#resolveExit = resolve;
    });
    this.stdin.setEncoding('utf8');
    this.stdin.on('data', (chunk: string) => {
      this.#received += chunk;
    });
    this.stdin.on('end', () => {
      if (!this.ignoreInputEnd) this.exit(0);
    });
    if (spec.credentialChannel) {
      const fromParent = new PassThrough();
      fromParent.setEncoding('utf8').on('data', (chunk: string) => {
        this.#credentialText += chunk;
      });
      this.credentials = Duplex.from({ readable: this.#toParent, writable: fromParent });
    }
  }

  /** Complete lines the parent wrote to the credential channel so far. */
  public credentialLines(): string[] {
    return this.#credentialText.split('\n').slice(0, -1);
  }

  /** Writes one message to the parent on the credential channel. */
  public sendCredential(message: CredentialChannelMessage): void {
    this.#toParent.write(encodeCredentialMessage(message));
  }

  public get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  /** Complete lines the parent wrote to our stdin so far. */
  public receivedLines(): string[] {
    return this.#received.split('\n').slice(0, -1);
  }

  /** Parsed JSON of every line the parent wrote. */
  public receivedMessages(): unknown[] {
    return this.receivedLines().map((line) => JSON.parse(line));
  }

  /** Writes one JSON-RPC message as a line to our stdout. */
  public send(message: unknown): void {
    this.writeStdout(`${JSON.stringify(message)}\n`);
  }

  public writeStdout(text: string): void {
    if (this.#exit) throw new NotModelledError('FakeChildProcess', 'cannot write after exit');
    this.stdout.write(text);
  }

  /** Ends the child: stdout ends first, then `exited` resolves. Later calls do nothing. */
  public exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    if (this.#exit) return;
    this.#exit = { code, signal };
    this.stdout.end();
    this.stdin.destroy();
    this.#toParent.end();
    const exit = this.#exit;
    this.stdout.once('close', () => this.#resolveExit(exit));
    this.stdout.resume();
  }

  public kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.#exit) return;
    this.signals.push(signal);
    if (!this.ignoreSignals) this.exit(null, signal);
  }
}

/**
 * Spawns {@link FakeChildProcess}es. `failNextSpawn` makes the next spawn fail the way a missing
 * binary does: no child, an `exited` that carries `spawnError`, the spec kept in `failedSpawns`.
 */
export class FakeChildProcessPort implements ChildProcessPort {
  public readonly spawned: FakeChildProcess[] = [];
  public readonly failedSpawns: ChildSpawnSpec[] = [];
  #nextPid = 1000;
  readonly #spawnFailures: string[] = [];
  #onSpawn: ((child: FakeChildProcess) => void) | undefined;

  public spawn(spec: ChildSpawnSpec): ChildProcessHandle {
    const failure = this.#spawnFailures.shift();
    if (failure !== undefined) {
      this.failedSpawns.push(spec);
      return failedChildHandle(failure);
    }
    const child = new FakeChildProcess(spec, this.#nextPid++);
    this.spawned.push(child);
    this.#onSpawn?.(child);
    return child;
  }

  /** The most recent child; throws if none was spawned. */
  public get latest(): FakeChildProcess {
    const child = this.spawned.at(-1);
    if (!child) throw new NotModelledError('FakeChildProcessPort', 'nothing was spawned');
    return child;
  }

  public failNextSpawn(reason = 'spawn ENOENT'): this {
    this.#spawnFailures.push(reason);
    return this;
  }

  /** Runs for each spawned child, e.g. to answer `initialize` automatically. */
  public onSpawn(handler: (child: FakeChildProcess) => void): this {
    this.#onSpawn = handler;
    return this;
  }
}
