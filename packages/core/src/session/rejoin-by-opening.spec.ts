import { describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { rejoinByOpening } from './rejoin-by-opening.js';

const signal = new AbortController().signal;
/** Every pending promise continuation has run. */
const flushed = () => new Promise<void>((resolve) => setImmediate(resolve));

describe(rejoinByOpening, () => {
  it('returns the handle once it is ready', async () => {
    const handle = new FakeNotebookHandle({ readiness: { document: 'pending', runtime: 'pending' } });
    const outcome = rejoinByOpening(async () => handle, signal);
    handle.setReadiness({ document: 'ready', runtime: 'ready' });
    expect(await outcome).toEqual({ kind: 'connected', handle });
    expect(handle.isClosed).toBe(false);
  });

  it("until 'document': returns the handle while its runtime is still pending, and it stays open", async () => {
    const handle = new FakeNotebookHandle({ readiness: { document: 'ready', runtime: 'pending' } });
    expect(await rejoinByOpening(async () => handle, signal, { until: 'document' })).toEqual({
      kind: 'connected',
      handle,
    });
    expect(handle.isClosed).toBe(false);
  });

  it("until 'document': a document still pending is waited for like the default (runtime settled)", async () => {
    const handle = new FakeNotebookHandle({ readiness: { document: 'pending', runtime: 'pending' } });
    let settled = false;
    const outcome = rejoinByOpening(async () => handle, signal, { until: 'document' }).finally(() => {
      settled = true;
    });
    await flushed();
    handle.setReadiness({ document: 'ready', runtime: 'pending' });
    await flushed();
    expect(settled).toBe(false);
    handle.setReadiness({ document: 'ready', runtime: 'ready' });
    expect((await outcome).kind).toBe('connected');
  });

  it('by default waits for the runtime to settle', async () => {
    const handle = new FakeNotebookHandle({ readiness: { document: 'ready', runtime: 'pending' } });
    let settled = false;
    const outcome = rejoinByOpening(async () => handle, signal).finally(() => {
      settled = true;
    });
    await flushed();
    expect(settled).toBe(false);
    handle.setReadiness({ document: 'ready', runtime: 'unavailable', reason: 'no kernel' });
    expect((await outcome).kind).toBe('connected');
  });

  it("until 'document': a document that failed to load is retry-later and the handle is closed", async () => {
    const handle = new FakeNotebookHandle({
      readiness: { document: 'failed', runtime: 'pending', reason: 'bad json' },
    });
    const outcome = await rejoinByOpening(async () => handle, signal, { until: 'document' });
    expect(outcome).toEqual({ kind: 'retry-later', reason: expect.stringContaining('bad json') });
    expect(handle.isClosed).toBe(true);
  });

  it('classifies a definitive refusal as evicted and any other CoreError as retry-later', async () => {
    expect(
      await rejoinByOpening(async () => {
        throw new CoreError('notebookUnavailable', 'gone for good');
      }, signal),
    ).toEqual({ kind: 'evicted', reason: 'gone for good' });
    expect(
      await rejoinByOpening(async () => {
        throw new CoreError('daemonUnavailable', 'not up yet');
      }, signal),
    ).toEqual({ kind: 'retry-later', reason: 'not up yet' });
  });

  it('closes a handle whose wait fails, and throws what is not a CoreError', async () => {
    const failing = new FakeNotebookHandle({
      readiness: { document: 'failed', runtime: 'pending', reason: 'bad json' },
    });
    const outcome = await rejoinByOpening(async () => failing, signal);
    expect(outcome.kind).toBe('retry-later');
    expect(failing.isClosed).toBe(true);
    await expect(
      rejoinByOpening(async () => {
        throw new TypeError('a bug');
      }, signal),
    ).rejects.toThrow('a bug');
  });
});
