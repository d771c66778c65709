import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { RecoveryLoop } from '@nteract-mcp/core';
import { type ChildServerTestHarness, resultText, startChildServerTestHarness } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { DaemonWatchLoop } from './daemon-watch-loop.js';
import { LocalPathNotebookBackend } from './local-path-notebook-backend.js';

const kernelStarting = { document: 'ready', runtime: 'pending', reason: 'the kernel is starting' } as const;

/**
 * The child server in a real container with this plugin's backends and watch
 * loop (started as the child's lifecycle starts it), over the fake daemon; a saved notebook in the
 * working directory, connected.
 */
async function connectedHarness(): Promise<{ harness: ChildServerTestHarness; path: string }> {
  const harness = await startChildServerTestHarness({ fakeLocalBackends: false, plugins: [createLocalDaemonPlugin()] });
  harness.container.get(RecoveryLoop).start({ peerLabel: () => 'agent', handoff: undefined, exit: () => undefined });
  const path = join(harness.cwd, 'a.ipynb');
  writeFileSync(path, '{}');
  await harness.callJson('connect_notebook', { path });
  return { harness, path };
}

/** {@link connectedHarness}, then a daemon restart whose fresh room is back while its kernel is still starting. */
async function restartedWhileKernelStarts() {
  const connected = await connectedHarness();
  const daemon = connected.harness.daemon;
  if (!daemon) throw new Error('the harness has a daemon');
  const before = connected.harness.slot.active;
  daemon.setNextReadiness(kernelStarting);
  daemon.restart();
  await connected.harness.container.get(DaemonWatchLoop).idle();
  return { ...connected, daemon, before };
}

describe(`${LocalPathNotebookBackend.name}: the way back after a daemon restart`, () => {
  let harness: ChildServerTestHarness | undefined;
  afterEach(async () => {
    harness?.container.get(RecoveryLoop).stop();
    await harness?.close();
    harness = undefined;
  });

  it('has the session back once the room is open, while the kernel of the fresh daemon is still starting', async () => {
    const connected = await restartedWhileKernelStarts();
    harness = connected.harness;
    const { before } = connected;
    const rejoined = harness.slot.active;
    expect(rejoined).not.toBe(before);
    expect(rejoined?.origin).toBe('rejoin');
    expect(rejoined?.handle.notebookPath).toBe(connected.path);
    // session_status tells the kernel's state as it is.
    const status = await harness.callJson('session_status', {});
    expect(status.active).toMatchObject({ path: connected.path, readiness: kernelStarting });
    // Reads and edits work at once.
    expect(resultText(await harness.call('get_all_cells', {}))).not.toContain('still');
  });

  it('lets the next create_cell with and_run wait for the kernel still starting, then run it exactly once', async () => {
    const connected = await restartedWhileKernelStarts();
    harness = connected.harness;
    const { daemon } = connected;
    const handle = daemon.handles.at(-1);
    expect(harness.slot.active?.handle).toBe(handle);
    const progress: Progress[] = [];
    const run = harness.call(
      'create_cell',
      { source: 'x = 41 + 1', and_run: true },
      { onProgress: (update) => progress.push(update) },
    );
    await expect.poll(() => progress.length).toBeGreaterThan(0);
    expect(progress[0]?.message).toMatch(/waiting for the kernel/);
    expect(handle?.calls.filter((call) => call.startsWith('executeCell'))).toEqual([]);
    handle?.setReadiness({ document: 'ready', runtime: 'ready' });
    const result = await run;
    expect(result.isError ?? false).toBe(false);
    expect(resultText(result)).toContain('out: x = 41 + 1');
    expect(handle?.calls.filter((call) => call.startsWith('executeCell'))).toHaveLength(1);
    expect(handle?.calls.filter((call) => call === 'insertCell')).toHaveLength(1);
  });

  it('keeps the session when the fresh daemon finds no kernel for it, and says why', async () => {
    const connected = await restartedWhileKernelStarts();
    harness = connected.harness;
    const { daemon } = connected;
    daemon.handles.at(-1)?.setReadiness({ document: 'ready', runtime: 'unavailable', reason: 'no ipykernel' });
    const refused = await harness.call('create_cell', { source: 'x = 1', and_run: true });
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toContain('no ipykernel');
    expect(harness.slot.active?.handle.notebookPath).toBe(connected.path);
  });
});
