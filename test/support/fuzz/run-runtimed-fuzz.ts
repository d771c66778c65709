import { createConnection, type Socket } from 'node:net';
import type { TestDaemon } from '@nteract-mcp/daemon/testing';
import { RuntimedConnection, RuntimedFrameDecoder } from '@nteract-mcp/runtimed-protocol';
import fc from 'fast-check';
import { FuzzViolations } from './fuzz-violations.js';
import {
  materializeSession,
  type RuntimedExpectation,
  type RuntimedFuzzSession,
  type RuntimedKnownKind,
  runtimedFuzzSession,
} from './runtimed-fuzz-session.js';

export interface RuntimedFuzzOptions {
  readonly daemon: TestDaemon;
  /** An existing directory for the notebooks the fuzz opens and saves. */
  readonly workDir: string;
  /** Frames to send, roughly (a session averages ~4: the handshake and its frames). */
  readonly inputs: number;
  readonly seed: number;
  readonly answerTimeoutMs?: number;
  readonly shrinkBudgetMs?: number;
  /** Record a crash, restart the daemon and go on (no shrinking), for long runs. */
  readonly continueAfterCrash?: boolean;
  readonly log?: (line: string) => void;
}

export interface RuntimedFuzzCounts {
  sessions: number;
  frames: number;
  requests: number;
  answers: number;
  refused: number;
  closedByDaemon: number;
}

export interface RuntimedFuzzResult {
  readonly counts: RuntimedFuzzCounts;
  readonly violations: FuzzViolations;
  readonly failure: string | undefined;
  readonly restarts: number;
  readonly summary: string;
}

const meanFramesPerSession = 4;

interface SessionOutcome {
  readonly frames: readonly Record<string, unknown>[];
  readonly closedByDaemon: boolean;
  readonly timedOut: boolean;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * Sends one session's bytes on a fresh connection and collects what comes back, until the
 * condition its expectation names: the sentinel and every request answered (open), the daemon
 * closing the connection (closed), or the close after we end our side (unknown).
 */
async function runSession(
  socketPath: string,
  writes: readonly Buffer[],
  expectation: RuntimedExpectation,
  timeoutMs: number,
): Promise<SessionOutcome> {
  const socket: Socket = createConnection(socketPath);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const decoder = new RuntimedFrameDecoder();
  const frames: Record<string, unknown>[] = [];
  let endedByUs = false;
  let closedByDaemon = false;
  let wake: () => void = () => undefined;
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      if (!endedByUs) closedByDaemon = true;
      resolve();
    }),
  );
  socket.on('data', (chunk: Buffer) => {
    for (const decoded of decoder.push(chunk)) {
      frames.push(decoded.kind === 'frame' ? (decoded.value as Record<string, unknown>) : { undecodable: decoded });
    }
    wake();
  });
  for (const piece of writes) {
    if (socket.destroyed || !socket.writable) break;
    await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const answered = (): boolean => {
    const counts = answerCounts(frames);
    if (expectation.sentinelId !== undefined && !counts.has(String(expectation.sentinelId))) return false;
    for (const [id, request] of expectation.requests) if ((counts.get(id) ?? 0) < request.count) return false;
    return true;
  };
  const deadline = Date.now() + timeoutMs;
  let timedOut = false;
  if (expectation.end === 'open') {
    const isClosed = () => socket.destroyed || closedByDaemon;
    while (!answered() && !isClosed()) {
      if (Date.now() > deadline) {
        timedOut = true;
        break;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    endedByUs = !closedByDaemon;
    socket.end();
  } else if (expectation.end === 'unknown') {
    endedByUs = true;
    socket.end();
  }
  timedOut ||= await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(true), Math.max(1_000, deadline - Date.now()))),
  ]);
  socket.destroy();
  return { frames, closedByDaemon, timedOut };
}

function answerCounts(frames: readonly Record<string, unknown>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const frame of frames) {
    if (typeof frame.id !== 'number') continue;
    const key = String(frame.id);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const idlessTypes: ReadonlySet<string> = new Set(['hello', 'connected', 'error', 'event', 'broadcast', 'room_closed']);

/** Checks what came back against the expectation; returns whether the handshake was accepted. */
function judge(
  outcome: SessionOutcome,
  expectation: RuntimedExpectation,
  lines: readonly string[],
  violations: FuzzViolations,
): boolean {
  const add = (kind: string, detail: string) => violations.add(kind, detail, lines);
  const { frames } = outcome;
  for (const frame of frames) {
    if (Object.hasOwn(frame, 'undecodable')) add('daemon sent an undecodable frame', JSON.stringify(frame));
    else if (typeof frame.type !== 'string') add('daemon frame without a type', JSON.stringify(frame).slice(0, 300));
    else if (frame.id === undefined && !idlessTypes.has(frame.type))
      add('daemon frame of an unknown type', JSON.stringify(frame).slice(0, 300));
    else if (frame.id !== undefined && frame.type !== 'ok' && frame.type !== 'error')
      add('answer that is neither ok nor error', JSON.stringify(frame).slice(0, 300));
    if (frame.type === 'error' && (typeof frame.code !== 'string' || typeof frame.message !== 'string'))
      add('error frame without code and message', JSON.stringify(frame).slice(0, 300));
    if (frame.type === 'error' && frame.code === 'internal')
      add('internal error for a client input', JSON.stringify(frame).slice(0, 300));
  }
  if (outcome.timedOut) {
    add(
      expectation.end === 'open'
        ? 'requests on a healthy connection not answered in time'
        : 'connection not closed in time',
      `expected end ${expectation.end}; got ${frames.length} frames: ${JSON.stringify(frames).slice(0, 300)}`,
    );
  }
  for (const frame of frames) {
    if (frame.type === 'error' && frame.code === 'oversized_frame' && /limit of 65536\b/.test(String(frame.message)))
      if (expectation.handshake !== 'refuse')
        add('a frame after the handshake held to the 64 KiB handshake cap', JSON.stringify(frame).slice(0, 300));
  }
  const greeting = frames[0];
  const accepted = greeting?.type === 'hello' || greeting?.type === 'connected';
  const refusedWith = greeting?.type === 'error' && greeting.id === undefined ? String(greeting.code) : undefined;
  // A bad frame right behind a valid handshake may fail the connection before the greeting.
  const failedEarly = expectation.end === 'closed' && expectation.closeCodes.includes(refusedWith ?? '');
  if (expectation.handshake === 'accept' && !accepted && !failedEarly)
    add('valid handshake refused', JSON.stringify(greeting ?? 'no frame').slice(0, 300));
  if (expectation.handshake === 'refuse' && !expectation.closeCodes.includes(refusedWith ?? ''))
    add(
      'broken preamble or handshake not refused with the right error',
      `expected ${expectation.closeCodes.join('|')}; got ${JSON.stringify(greeting ?? 'no frame').slice(0, 300)}`,
    );
  if (expectation.handshake === 'refuse' && !outcome.closedByDaemon)
    add('connection left open after a refused handshake', `${frames.length} frames`);
  if (expectation.handshake === 'either' && !accepted && refusedWith === undefined)
    add('notebook handshake neither accepted nor refused', JSON.stringify(greeting ?? 'no frame').slice(0, 300));

  const counts = answerCounts(frames);
  for (const [id, answers] of counts) {
    if (answers > (expectation.sentIds.get(id) ?? 0))
      add(
        'more answers than requests with that id',
        `id ${id}: ${answers} answers for ${expectation.sentIds.get(id) ?? 0} frames`,
      );
  }
  if (!accepted || expectation.handshake === 'refuse' || expectation.handshake === 'unknown') return accepted;
  if (expectation.end === 'open') {
    if (outcome.closedByDaemon)
      add('daemon closed a connection that broke no rule', JSON.stringify(frames.slice(-2)).slice(0, 300));
    for (const [id, request] of expectation.requests) {
      const answers = counts.get(id) ?? 0;
      if (answers < request.count && !outcome.closedByDaemon)
        add('request not answered', `id ${id}: ${answers} answers for ${request.count} requests`);
    }
  } else if (expectation.end === 'closed') {
    if (!outcome.closedByDaemon && !outcome.timedOut)
      add('connection left open after a protocol error', `${frames.length} frames`);
    const closing = frames.find(
      (frame) => frame.type === 'error' && expectation.closeCodes.includes(String(frame.code)),
    );
    if (!closing)
      add(
        'protocol error not answered with its error frame',
        `expected ${expectation.closeCodes.join('|')}; got ${JSON.stringify(frames.slice(-2)).slice(0, 300)}`,
      );
    for (const [id, answers] of counts) {
      if (answers > (expectation.requests.get(id)?.count ?? 0) && !(closing && closing.id === Number(id)))
        add('answered a request sent after a protocol error', `id ${id}`);
    }
  }
  return accepted;
}

/** Remembers notebook, cell and execution ids the daemon mentions, for later sessions to use. */
function harvest(frames: readonly Record<string, unknown>[], known: Record<RuntimedKnownKind, string[]>): void {
  const push = (kind: RuntimedKnownKind, value: unknown) => {
    if (typeof value !== 'string' || known[kind].includes(value)) return;
    known[kind].push(value);
    if (known[kind].length > 12) known[kind].shift();
  };
  for (const frame of frames) {
    push('notebook', frame.notebook_id);
    push('execution', frame.execution_id);
    const cell = frame.cell as { id?: unknown } | undefined;
    push('cell', cell?.id);
    for (const item of (Array.isArray(frame.cells) ? frame.cells : []) as { id?: unknown }[]) push('cell', item?.id);
    for (const room of (Array.isArray(frame.rooms) ? frame.rooms : []) as { notebook_id?: unknown }[])
      push('notebook', room?.notebook_id);
  }
}

function describeSession(session: RuntimedFuzzSession, workDir: string): string {
  const { lines, writes } = materializeSession(session, { workDir, known: { cell: [], execution: [], notebook: [] } });
  return [`${writes.length} write(s):`, ...lines.map((line) => `  ${line}`)].join('\n');
}

/**
 * Fuzzes runtimed through its socket. Each fast-check run is one connection (see
 * {@link runtimedFuzzSession}); meanwhile a second, well-behaved control connection pings and
 * lists rooms. A run fails (and fast-check shrinks it) when the daemon dies or the well-behaved
 * client gets no answer; every other broken promise of the wire contract is collected.
 */
export async function runRuntimedFuzz(options: RuntimedFuzzOptions): Promise<RuntimedFuzzResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.answerTimeoutMs ?? 30_000;
  const violations = new FuzzViolations();
  const scratch = new FuzzViolations();
  const counts: RuntimedFuzzCounts = { sessions: 0, frames: 0, requests: 0, answers: 0, refused: 0, closedByDaemon: 0 };
  const known: Record<RuntimedKnownKind, string[]> = { cell: [], execution: [], notebook: [] };
  let daemon = options.daemon;
  const restarted: TestDaemon[] = [];
  const openObserver = async () =>
    (await RuntimedConnection.open({ socketPath: daemon.socketPath, handshake: { channel: 'control' }, timeoutMs }))
      .connection;
  let observer = await openObserver();
  let restarts = 0;
  let failedAt: number | undefined;
  const shrinkBudgetMs = options.shrinkBudgetMs ?? 60_000;
  const alive = () => daemon.process.exitCode === null && daemon.process.signalCode === null;

  /** A daemon that died (or is dying) is restarted, and the well-behaved client reconnected. */
  const ensureDaemon = async (): Promise<void> => {
    if (alive() && !observer.isClosed) return;
    observer.close();
    if (alive()) {
      try {
        observer = await openObserver();
        return;
      } catch {
        // the daemon is on its way out: wait for its exit below
      }
      const exited = new Promise((resolve) => daemon.process.once('exit', resolve));
      if (alive()) await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (alive()) await daemon.kill();
    }
    restarts += 1;
    daemon = await daemon.restart();
    restarted.push(daemon);
    observer = await openObserver();
  };

  const observe = async (): Promise<string | undefined> => {
    try {
      const pong = await withTimeout(observer.request({ type: 'ping' }), timeoutMs, 'ping');
      const rooms = await withTimeout(observer.request({ type: 'list_rooms' }), timeoutMs, 'list_rooms');
      if (pong.type !== 'ok' || !Array.isArray(rooms.rooms))
        return `unexpected answers ${JSON.stringify([pong, rooms]).slice(0, 300)}`;
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  const property = fc.asyncProperty(runtimedFuzzSession, async (session) => {
    if (failedAt !== undefined && Date.now() - failedAt > shrinkBudgetMs) return true;
    const book = failedAt === undefined ? violations : scratch;
    await ensureDaemon();
    const { writes, expectation, lines } = materializeSession(session, { workDir: options.workDir, known });
    if (failedAt === undefined) {
      counts.sessions += 1;
      counts.frames += 1 + session.frames.length;
      counts.requests += [...expectation.requests.values()].reduce((sum, request) => sum + request.count, 0);
    }
    const [outcome, observed] = await Promise.all([
      runSession(daemon.socketPath, writes, expectation, timeoutMs).catch((error: Error) => error),
      observe(),
    ]);
    let problem: string | undefined;
    if (outcome instanceof Error) problem = `could not connect: ${outcome.message}`;
    else {
      const accepted = judge(outcome, expectation, lines, book);
      harvest(outcome.frames, known);
      if (failedAt === undefined) {
        counts.answers += [...answerCounts(outcome.frames).values()].reduce((sum, n) => sum + n, 0);
        if (!accepted) counts.refused += 1;
        if (outcome.closedByDaemon) counts.closedByDaemon += 1;
      }
    }
    if (!alive())
      problem = `the daemon died (${daemon.process.exitCode ?? daemon.process.signalCode})\n${daemon.stderr().slice(-3000)}`;
    else if (observed !== undefined) problem = `the well-behaved client got no answer: ${observed}`;
    else if (problem === undefined) {
      const after = await observe();
      if (after !== undefined) problem = `the well-behaved client got no answer after the session: ${after}`;
    }
    if (problem === undefined) return true;
    if (options.continueAfterCrash) {
      violations.add(problem.split('\n')[0] as string, problem, lines);
      return true;
    }
    if (failedAt === undefined) {
      violations.add(problem.split('\n')[0] as string, problem, lines);
      failedAt = Date.now();
      log(`[fuzz runtimed] ${problem.split('\n')[0]}; shrinking`);
    }
    throw new Error(problem);
  });

  const numRuns = Math.max(1, Math.ceil(options.inputs / meanFramesPerSession));
  const details = await fc.check(property, { numRuns, seed: options.seed, includeErrorInReport: true });
  let failure: string | undefined;
  if (details.failed) {
    const counterexample = details.counterexample?.[0] as RuntimedFuzzSession | undefined;
    failure = [
      fc.defaultReportMessage(details) ?? 'fast-check failed',
      counterexample ? `shrunk session as sent:\n${describeSession(counterexample, options.workDir)}` : '',
    ].join('\n');
  }

  await ensureDaemon();
  const last = await observe();
  if (last !== undefined) violations.add('the well-behaved client fails after the fuzz', last, []);
  observer.close();
  try {
    const fresh = await openObserver();
    observer = fresh;
    const rooms = await withTimeout(fresh.request({ type: 'list_rooms' }), timeoutMs, 'list_rooms');
    if (!Array.isArray(rooms.rooms))
      violations.add('a new client cannot list rooms after the fuzz', JSON.stringify(rooms), []);
    fresh.close();
  } catch (error) {
    violations.add('a new client cannot connect after the fuzz', (error as Error).message, []);
  }
  for (const extra of restarted) await extra.dispose();

  const elapsedMs = Date.now() - started;
  const summary =
    `[fuzz runtimed] seed ${options.seed}: ${counts.frames} frames in ${counts.sessions} connections ` +
    `(${counts.requests} well-formed requests, ${counts.answers} answers, ${counts.refused} refused or broken, ` +
    `${counts.closedByDaemon} closed by the daemon), ${violations.total} violations, ${restarts} restarts after a crash, ` +
    `${(elapsedMs / 1000).toFixed(1)} s`;
  log(summary);
  return { counts, violations, failure, restarts, summary };
}
