import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { encodeRuntimedFrame, RuntimedFrameDecoder } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { identifyProcess } from '../process/probe-process.js';
import { resolveDaemonLayout } from '../resolve-daemon-layout.js';
import { formatDaemonLockRecord, parseDaemonLockRecord } from './daemon-lock-record.js';
import { acquireDaemonSingleton, inspectLockHolders, type SingletonTimings } from './daemon-singleton.js';

const quick: SingletonTimings = {
  pingTimeoutMs: 500,
  servingGraceMs: 300,
  startingGraceMs: 300,
  termGraceMs: 2000,
  killGraceMs: 5000,
};

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function layout() {
  const dir = mkdtempSync(join(tmpdir(), 'dsl-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return resolveDaemonLayout({ socketPath: join(dir, 'run', 'd.sock'), dataDir: join(dir, 'data') });
}

/** A live process that is not a daemon (it never answers), and a promise of how it ended. */
async function silentProcess(
  script = 'exec sleep 600',
): Promise<{ child: ChildProcess; ended: Promise<string | null> }> {
  const child = spawn('sh', ['-c', script], { stdio: 'ignore' });
  const ended = new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  cleanups.push(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  return { child, ended };
}

/** Writes both lock files as if `pid` (with its real identity) held them. */
async function impersonate(
  target: ReturnType<typeof layout>,
  pid: number,
  state: 'starting' | 'serving',
): Promise<void> {
  const identity = await identifyProcess(pid);
  const text = formatDaemonLockRecord({ ...identity, pid, nonce: 'theirs', socket: target.socketPath, state });
  mkdirSync(target.socketDir, { recursive: true, mode: 0o700 });
  mkdirSync(target.dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(target.lockPath, text, { mode: 0o600 });
  writeFileSync(join(target.dataDir, 'daemon.lock'), text, { mode: 0o600 });
}

/**
 * A stand-in for a daemon `pid` whose event loop is blocked for a while: it accepts connections
 * but does not answer until `busy` is set false, then answers the handshake and pings.
 */
async function busyDaemon(
  socketPath: string,
  pid: number,
): Promise<{ setBusy(busy: boolean): void; connections(): number }> {
  let busy = true;
  let count = 0;
  const held: Socket[] = [];
  const server = createServer((socket) => {
    count += 1;
    held.push(socket);
    socket.on('error', () => undefined);
    const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 65_536 });
    let preamble = true;
    socket.on('data', (chunk: Buffer) => {
      if (busy) return;
      const data = preamble ? chunk.subarray(5) : chunk;
      preamble = false;
      for (const decoded of decoder.push(data)) {
        if (decoded.kind !== 'frame') continue;
        const frame = decoded.value as Record<string, unknown>;
        if (frame.channel === 'control') socket.write(encodeRuntimedFrame({ type: 'hello', pid, protocol_version: 1 }));
        else socket.write(encodeRuntimedFrame({ type: 'ok', id: frame.id, pong: true }));
      }
    });
  });
  mkdirSync(join(socketPath, '..'), { recursive: true, mode: 0o700 });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  cleanups.push(() => {
    for (const socket of held) socket.destroy();
    server.close();
  });
  return {
    setBusy: (value) => {
      busy = value;
    },
    connections: () => count,
  };
}

describe(acquireDaemonSingleton, { timeout: 60_000 }, () => {
  it('stops a verified holder that stays silent through the grace (SIGTERM) and takes both locks', async () => {
    const target = layout();
    const holder = await silentProcess();
    await impersonate(target, holder.child.pid as number, 'serving');
    // What `runtimed status` sees: both locks held by a live, verified process that does not answer.
    const reports = await inspectLockHolders(target, quick);
    expect(reports.map((report) => [report.verdict.kind, report.record.pid])).toEqual([
      ['unreachable', holder.child.pid],
      ['unreachable', holder.child.pid],
    ]);
    const logger = new RecordingLogger();
    const singleton = await acquireDaemonSingleton(target, logger, quick);
    cleanups.push(() => singleton.release());
    expect(await holder.ended).toBe('SIGTERM');
    for (const path of [target.lockPath, join(target.dataDir, 'daemon.lock')]) {
      expect(parseDaemonLockRecord(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, state: 'starting' });
    }
  });

  it('gives a holder whose socket accepts but does not answer (busy) the long grace, and refuses once it answers', async () => {
    const target = layout();
    const holder = await silentProcess();
    const pid = holder.child.pid as number;
    await impersonate(target, pid, 'serving');
    const fake = await busyDaemon(target.socketPath, pid);
    const attempt = acquireDaemonSingleton(target, new RecordingLogger(), {
      ...quick,
      servingGraceMs: 0,
      startingGraceMs: 60_000,
    }).then(
      (singleton) => singleton,
      (error: unknown) => error,
    );
    // Past the serving grace (0) while silent; then it comes back.
    while (fake.connections() < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    fake.setBusy(false);
    const outcome = await attempt;
    expect(DaemonError.is(outcome, 'alreadyRunning')).toBe(true);
    expect((outcome as Error).message).toMatch(`a daemon is already running (pid ${pid})`);
    expect(holder.child.exitCode === null && holder.child.signalCode === null).toBe(true);
  });

  it('uses SIGKILL on a holder that ignores SIGTERM', async () => {
    const target = layout();
    // An ignored signal stays ignored across exec.
    const holder = await silentProcess("trap '' TERM; exec sleep 600");
    await impersonate(target, holder.child.pid as number, 'starting');
    const singleton = await acquireDaemonSingleton(target, new RecordingLogger(), quick);
    cleanups.push(() => singleton.release());
    expect(await holder.ended).toBe('SIGKILL');
  });

  it('never signals a live process whose identity does not match the lock', async () => {
    const target = layout();
    const bystander = await silentProcess();
    const pid = bystander.child.pid as number;
    const identity = await identifyProcess(pid);
    const text = formatDaemonLockRecord({ ...identity, pid, startTime: 'proc:1', nonce: 'old', state: 'serving' });
    mkdirSync(target.socketDir, { recursive: true, mode: 0o700 });
    writeFileSync(target.lockPath, text, { mode: 0o600 });
    const singleton = await acquireDaemonSingleton(target, new RecordingLogger(), quick);
    cleanups.push(() => singleton.release());
    expect(bystander.child.exitCode === null && bystander.child.signalCode === null).toBe(true);
    expect(process.kill(pid, 0)).toBe(true);
  });

  it('marks its locks serving, and releases only locks that are still its own', async () => {
    const target = layout();
    const singleton = await acquireDaemonSingleton(target, new RecordingLogger(), quick);
    await singleton.markServing();
    expect(parseDaemonLockRecord(readFileSync(target.lockPath, 'utf8'))?.state).toBe('serving');
    const successor = formatDaemonLockRecord({ pid: 1, nonce: 'successor' });
    writeFileSync(join(target.dataDir, 'daemon.lock'), successor);
    await singleton.release();
    expect(() => readFileSync(target.lockPath)).toThrow();
    expect(readFileSync(join(target.dataDir, 'daemon.lock'), 'utf8')).toBe(successor);
  });
});
