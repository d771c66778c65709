import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
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
