import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { ManualClock } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
} from '../testing/start-child-server-test-harness.js';
import { accessWhenReady } from './access-when-ready.js';

const starting = { document: 'ready', runtime: 'pending' } as const;

describe(accessWhenReady, () => {
  let harness: ChildServerTestHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('lets a run right after connect_notebook wait for the starting kernel, reporting the wait, then run', async () => {
    harness = await startChildServerTestHarness({ daemon: { readiness: starting } });
    const connected = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
    expect(connected.notebook_id).toEqual(expect.any(String));
    const progress: Progress[] = [];
    const run = harness.call(
      'create_cell',
      { source: 'x = 1', and_run: true },
      { onProgress: (p) => progress.push(p) },
    );
    await expect.poll(() => progress.length).toBeGreaterThan(0);
    expect(progress[0]?.message).toMatch(/^waiting for the kernel of notebook .+ to be ready \(\d+ s\)$/);
    harness.daemon?.handles[0]?.setReadiness({ document: 'ready', runtime: 'ready' });
    const result = await run;
    expect(result.isError ?? false).toBe(false);
    expect(resultText(result)).toContain('out: x = 1');
  });

  it('refuses at once what cannot become ready: an unavailable runtime, no session', async () => {
    harness = await startChildServerTestHarness({
      daemon: { readiness: { document: 'ready', runtime: 'unavailable', reason: 'no python' } },
    });
    expect(resultText(await harness.call('execute_cell', { cell_id: 'c' }))).toContain('No active notebook session');
    await harness.callJson('connect_notebook', { path: 'a.ipynb' });
    const refused = await harness.call('execute_cell', { cell_id: 'c' });
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toBe("The notebook's runtime is unavailable: no python");
  });

  it('gives up when the wait bound passes (the slot says the kernel is still starting), and on cancellation', async () => {
    harness = await startChildServerTestHarness({ daemon: { readiness: starting } });
    await harness.callJson('connect_notebook', { path: 'a.ipynb' });
    const clock = new ManualClock(0);
    const reports: string[] = [];
    const context = {
      signal: new AbortController().signal,
      reportProgress: (_n: number, m: string) => reports.push(m),
    };
    const waiting = accessWhenReady({ slot: harness.slot, clock }, 'runtime', context, 12_000);
    clock.advance(5_000);
    clock.advance(5_000);
    clock.advance(2_000);
    const error = await waiting.then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(CoreError.is(error, 'runtimeNotReady')).toBe(true);
    expect(reports.map((m) => m.replace(/\d+ s/, 'N s'))).toEqual(Array(3).fill(reports[0]?.replace(/\d+ s/, 'N s')));
    expect(reports.at(-1)).toContain('(10 s)');

    const cancelled = new AbortController();
    const stopped = accessWhenReady({ slot: harness.slot, clock }, 'runtime', { ...context, signal: cancelled.signal });
    cancelled.abort();
    await expect(stopped).rejects.toMatchObject({ kind: 'runtimeNotReady' });
  });
});
