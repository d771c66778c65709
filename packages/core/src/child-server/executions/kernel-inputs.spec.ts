import { describe, expect, it } from 'vitest';
import { sdkDialect } from '../../contributions/sdk-dialect.js';
import type { InputRequest, Subscription } from '../../ports/notebook-handle.js';
import { SessionSlot } from '../../session/session-slot.js';
import { createTestContainer, FakeNotebookHandle, RecordingLogger } from '../../testing/index.js';
import { KernelInputs } from './kernel-inputs.js';

/** A handle whose kernel asks for input when the test says so, and records the lines it was given. */
class AskingHandle extends FakeNotebookHandle {
  readonly #listeners = new Set<(request: InputRequest) => void>();
  public readonly answered: (string | undefined)[] = [];

  public onInputRequest(listener: (request: InputRequest) => void): Subscription {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  public async answerInput(_request: InputRequest, value: string | undefined): Promise<boolean> {
    this.answered.push(value);
    return true;
  }

  public ask(request: InputRequest): void {
    for (const listener of this.#listeners) listener(request);
  }
}

/** Where the server sends no requests (the per-request era): inputs wait for a call or a task to answer them. */
const noServerRequests = { ...sdkDialect, sendsRequests: false };

function setup() {
  const container = createTestContainer().build();
  const slot = container.get(SessionSlot);
  const handle = new AskingHandle({ notebookId: 'nb-1' });
  slot.installActivated({ handle, target: { kind: 'notebook-id', notebookId: 'nb-1' }, origin: 'connect' });
  const inputs = new KernelInputs({
    slot,
    logger: new RecordingLogger(),
    dialect: () => noServerRequests,
    ask: () => undefined,
  });
  inputs.watchSessions();
  return { handle, inputs };
}

const request: InputRequest = {
  executionId: 'ex-1',
  inputId: 'in-1',
  cellId: 'c-1',
  prompt: 'name? ',
  password: false,
};

describe(KernelInputs, () => {
  it('hands a call the request its run made before the call heard the run had started', async () => {
    const { handle, inputs } = setup();
    const started = new Set<string>();
    const stop = new AbortController();
    let seen: InputRequest | undefined;
    void inputs.waitFor(started, stop.signal).then((asked) => {
      seen = asked;
    });
    // The kernel's input_request comes in the same read as the execution's start: first.
    handle.ask(request);
    await Promise.resolve();
    expect(seen).toBeUndefined();
    started.add('ex-1');
    inputs.executionStarted('ex-1');
    await Promise.resolve();
    expect(seen).toEqual(request);
    inputs.answer({ 'in-1': { action: 'accept', content: { line: 'Ada' } } });
    await Promise.resolve();
    expect(handle.answered).toHaveLength(1);
    stop.abort();
  });

  it('hands a waiting call a request of its runs at once, and never one of another run', async () => {
    const { handle, inputs } = setup();
    handle.ask(request);
    const stop = new AbortController();
    await expect(inputs.waitFor(new Set(['ex-1']), stop.signal)).resolves.toEqual(request);
    let other: InputRequest | undefined;
    void inputs.waitFor(new Set(['ex-2']), stop.signal).then(
      (asked) => {
        other = asked;
      },
      () => undefined,
    );
    inputs.executionStarted('ex-1');
    await Promise.resolve();
    expect(other).toBeUndefined();
    stop.abort();
  });
});
