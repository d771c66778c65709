import { describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { rejoinByOpening } from './rejoin-by-opening.js';

const signal = new AbortController().signal;

describe(rejoinByOpening, () => {
  it('returns the handle once it is ready', async () => {
    const handle = new FakeNotebookHandle({ readiness: { document: 'pending', runtime: 'pending' } });
    const outcome = rejoinByOpening(async () => handle, signal);
    handle.setReadiness({ document: 'ready', runtime: 'ready' });
    expect(await outcome).toEqual({ kind: 'connected', handle });
    expect(handle.isClosed).toBe(false);
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
