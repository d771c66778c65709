import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DaemonEvent } from '@nteract-mcp/core';
import { ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimedEventPump } from './runtimed-event-pump.js';
import { scriptedRuntimedDaemon } from './testing/scripted-runtimed-daemon.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A control-channel stand-in for runtimed at `socketPath`: greets with `hello`, answers `subscribe`. */
async function controlDaemon(socketPath: string, pid: number): Promise<{ stop(): Promise<void> }> {
  const daemon = await scriptedRuntimedDaemon(socketPath, {
    onHandshake: (peer) =>
      peer.send({ type: 'hello', pid, started_at: '2026-01-01T00:00:00.000Z', version: '1.0.0', protocol_version: 1 }),
    onRequest: (frame, peer) => {
      if (frame.type === 'subscribe') peer.send({ type: 'ok', id: frame.id as number, subscribed: true });
    },
  });
  cleanups.push(() => daemon.stop());
  return daemon;
}

function pumpAt(socketPath: string, clock: ManualClock) {
  const events: DaemonEvent[] = [];
  const pump = new RuntimedEventPump({
    socketPath,
    heartbeatMs: 60_000,
    connectTimeoutMs: 5_000,
    clock,
    logger: new RecordingLogger(),
    emit: (event) => events.push(event),
  });
  cleanups.push(() => pump.stop());
  return { pump, events };
}

describe(RuntimedEventPump, () => {
  it('connects as soon as a daemon starts listening in the socket directory, without waiting for the back-off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtd-pump-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'd.sock');
    // Time stands still: no back-off timer ever fires, only the directory watch can bring it back.
    const clock = new ManualClock();
    const { pump, events } = pumpAt(socketPath, clock);
    pump.start();
    await expect.poll(() => clock.pendingTimerCount).toBeGreaterThan(0);
    await controlDaemon(socketPath, 101);
    await expect.poll(() => events.map((event) => event.kind)).toEqual(['connected']);
    expect(events[0]).toMatchObject({ kind: 'connected', info: { incarnation: { pid: 101 } } });
  });

  it('sees the next daemon at once after losing one, again without the back-off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtd-pump-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'd.sock');
    const clock = new ManualClock();
    const first = await controlDaemon(socketPath, 101);
    const { pump, events } = pumpAt(socketPath, clock);
    pump.start();
    await expect.poll(() => events.map((event) => event.kind)).toEqual(['connected']);
    await first.stop();
    await expect.poll(() => events.map((event) => event.kind)).toEqual(['connected', 'disconnected']);
    await controlDaemon(socketPath, 202);
    await expect.poll(() => events.map((event) => event.kind)).toEqual(['connected', 'disconnected', 'connected']);
    expect(events[2]).toMatchObject({ kind: 'connected', info: { incarnation: { pid: 202 } } });
  });
});
