import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { ContainerModule } from 'inversify';
import { describe, expect, it } from 'vitest';
import { NotebookBackend } from '../contributions/notebook-backend.js';
import { definePlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { type FakeNotebookBackend, fakeReopeningBackend } from '../testing/fake-notebook-backend.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { RejoinCoordinator } from './rejoin-coordinator.js';
import { SessionActivation } from './session-activation.js';
import { maxParkedSessions, SessionSlot } from './session-slot.js';

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What a scripted reopen does: hand over a handle, or fail for now (`retry-later`) or for good (`evicted`). */
type ScriptedOutcome =
  | { readonly kind: 'connected'; readonly handle: NotebookHandle }
  | { readonly kind: 'retry-later' | 'evicted'; readonly reason: string };

/** Local path and notebook id backends whose reopen the test answers, one attempt at a time. */
class ScriptedReopens {
  public readonly attempts: { target: NotebookTarget; outcome: ReturnType<typeof deferred<ScriptedOutcome>> }[] = [];

  public backends(): FakeNotebookBackend[] {
    return (['local-path', 'notebook-id'] as const).map((kind) =>
      fakeReopeningBackend(kind, (target) => this.reopen(target)),
    );
  }

  private async reopen(target: NotebookTarget): Promise<NotebookHandle> {
    const outcome = deferred<ScriptedOutcome>();
    this.attempts.push({ target, outcome });
    const answer = await outcome.promise;
    if (answer.kind === 'connected') return answer.handle;
    throw new CoreError(answer.kind === 'evicted' ? 'notebookUnavailable' : 'daemonUnavailable', answer.reason);
  }
}

function engine() {
  const reopens = new ScriptedReopens();
  const logger = new RecordingLogger();
  const container = createTestContainer({
    plugins: [
      definePlugin({
        id: 'test.backends',
        module: new ContainerModule(({ bind }) => {
          for (const backend of reopens.backends()) bind(NotebookBackend).toConstantValue(backend);
        }),
      }),
    ],
  })
    .override(Clock, new ManualClock(0))
    .override(Logger, logger)
    .build();
  return {
    slot: container.get(SessionSlot),
    activation: container.get(SessionActivation),
    coordinator: container.get(RejoinCoordinator),
    reopens,
    logger,
  };
}

const pathTarget = (name: string): NotebookTarget => ({ kind: 'local-path', path: `/n/${name}.ipynb`, existed: true });
const handleFor = (name: string) =>
  new FakeNotebookHandle({ notebookId: `id-${name}`, notebookPath: `/n/${name}.ipynb` });

function connectNow(slotEngine: ReturnType<typeof engine>, name: string) {
  return slotEngine.activation.activate({
    key: name,
    target: pathTarget(name),
    origin: 'connect',
    connect: async () => handleFor(name),
  });
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe(SessionActivation, () => {
  it('shares one in-flight attempt between concurrent connects to the same target', async () => {
    const e = engine();
    let calls = 0;
    const gate = deferred<NotebookHandle>();
    const request = {
      key: 'a',
      target: pathTarget('a'),
      origin: 'connect' as const,
      connect: () => {
        calls++;
        return gate.promise;
      },
    };
    const first = e.activation.activate(request);
    const second = e.activation.activate(request);
    expect(second).toBe(first);
    gate.resolve(handleFor('a'));
    expect((await first).handle.notebookId).toBe('id-a');
    expect(calls).toBe(1);
  });

  it('A→B→A: the second A is a new attempt; stale A and superseded B never install', async () => {
    const e = engine();
    const gates = { a1: deferred<NotebookHandle>(), b: deferred<NotebookHandle>(), a2: deferred<NotebookHandle>() };
    const a1 = e.activation.activate({
      key: 'a',
      target: pathTarget('a'),
      origin: 'connect',
      connect: () => gates.a1.promise,
    });
    const b = e.activation.activate({
      key: 'b',
      target: pathTarget('b'),
      origin: 'connect',
      connect: () => gates.b.promise,
    });
    const a2 = e.activation.activate({
      key: 'a',
      target: pathTarget('a'),
      origin: 'connect',
      connect: () => gates.a2.promise,
    });
    expect(a2).not.toBe(a1);
    const staleA = handleFor('a');
    const staleB = handleFor('b');
    const freshA = handleFor('a');
    gates.a1.resolve(staleA);
    gates.b.resolve(staleB);
    await expect(a1).rejects.toSatisfy((error: unknown) => CoreError.is(error, 'supersededActivation'));
    await expect(b).rejects.toSatisfy((error: unknown) => CoreError.is(error, 'supersededActivation'));
    expect(e.slot.active).toBeUndefined();
    gates.a2.resolve(freshA);
    expect((await a2).handle).toBe(freshA);
    expect(e.slot.active?.handle).toBe(freshA);
    expect(staleA.isClosed && staleB.isClosed).toBe(true);
    expect(e.slot.parked).toEqual([]);
  });

  it('leaves the healthy installed session alone when a replacement fails to connect', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    await expect(
      e.activation.activate({
        key: 'b',
        target: pathTarget('b'),
        origin: 'connect',
        connect: async () => Promise.reject(new CoreError('daemonUnavailable', 'down')),
      }),
    ).rejects.toThrow('down');
    expect(e.slot.active).toBe(a);
    expect(e.slot.parked).toEqual([]);
    expect(a.handle.isClosed).toBe(false);
  });

  it('keeps the previous occupant when the installation is refused at commit (handle closed meanwhile)', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    const doomed = handleFor('b');
    const result = e.activation.activate({
      key: 'b',
      target: pathTarget('b'),
      origin: 'connect',
      connect: async () => {
        doomed.simulateClose('disconnected');
        return doomed;
      },
    });
    await expect(result).rejects.toSatisfy((error: unknown) => CoreError.is(error, 'localSyncFailed'));
    expect(e.slot.active).toBe(a);
    expect(e.slot.parked).toEqual([]);
    expect(e.slot.lastDrop).toBeUndefined();
  });
});

describe(SessionSlot, () => {
  it('parks the previous session on a switch and records Switched', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    const b = await connectNow(e, 'b');
    expect(e.slot.active).toBe(b);
    expect(e.slot.parked).toEqual([a]);
    expect(a.handle.isClosed).toBe(false);
    expect(e.slot.lastDrop).toMatchObject({ reason: 'switched', notebookId: 'id-a', notebookPath: '/n/a.ipynb' });
  });

  it('switching back makes a fresh activation and drops the old parked peer only after installing', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    await connectNow(e, 'b');
    const gate = deferred<NotebookHandle>();
    const back = e.activation.activate({
      key: 'a',
      target: pathTarget('a'),
      origin: 'connect',
      connect: () => gate.promise,
    });
    await settle();
    expect(a.handle.isClosed).toBe(false);
    gate.resolve(handleFor('a'));
    const fresh = await back;
    expect(fresh.activation).not.toBe(a.activation);
    expect(a.handle.isClosed).toBe(true);
    expect(e.slot.parked.map((session) => session.handle.notebookId)).toEqual(['id-b']);
  });

  it(`evicts the least recently used parked session beyond ${maxParkedSessions} and disconnects it`, async () => {
    const e = engine();
    const sessions = [];
    for (let i = 0; i < maxParkedSessions + 2; i++) sessions.push(await connectNow(e, `n${i}`));
    expect(e.slot.parked).toHaveLength(maxParkedSessions);
    expect(sessions[0]?.handle.isClosed).toBe(true);
    expect(sessions[1]?.handle.isClosed).toBe(false);
    expect(e.slot.parked[0]).toBe(sessions[1]);
    expect(e.slot.evictions).toEqual([{ notebookId: 'id-n0', notebookPath: '/n/n0.ipynb', at: 0 }]);
    expect(e.logger.find('evicted the least recently used parked session')).toHaveLength(1);
  });

  it('disconnects the active session (Disconnected) or a parked one (drop info untouched)', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    const b = await connectNow(e, 'b');
    const before = e.slot.lastDrop;
    expect(e.slot.disconnect('id-a')).toEqual({ kind: 'parked', session: a });
    expect(e.slot.lastDrop).toBe(before);
    expect(a.handle.isClosed).toBe(true);
    expect(e.slot.disconnect()).toEqual({ kind: 'active', session: b });
    expect(e.slot.lastDrop).toMatchObject({ reason: 'closed', notebookId: 'id-b' });
    expect(e.slot.disconnect('id-x')).toBeUndefined();
  });

  it('says why there is no session, in the original texts', async () => {
    const e = engine();
    expect(() => e.slot.access('document')).toThrow(
      'No active notebook session. Call connect_notebook or create_notebook first.',
    );
    await connectNow(e, 'a');
    e.slot.disconnect();
    expect(() => e.slot.access('document')).toThrow(
      'No active notebook session (you disconnected it with disconnect_notebook). Reconnect with: connect_notebook(notebook_id="id-a") — file: /n/a.ipynb',
    );
    e.slot.recordDrop('evicted', undefined, {
      kind: 'notebook-id',
      notebookId: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
    });
    expect(() => e.slot.access('mutation')).toThrow(
      'No active notebook session (notebook was evicted). Reconnect with: connect_notebook(notebook_id="0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90")',
    );
    // With the refusal's reason (as the rejoin records it): the cause, and no reconnect call that cannot work.
    e.slot.noteDropDetail('Notebook 0b9f2c44 is not available in the daemon.');
    expect(() => e.slot.access('mutation')).toThrow(
      'No active notebook session (notebook was evicted: Notebook 0b9f2c44 is not available in the daemon). Start again with create_notebook, or connect_notebook to a saved file.',
    );
  });

  it('gates access by requirement with distinct errors, and detects a replaced session after async work', async () => {
    const e = engine();
    const handle = new FakeNotebookHandle({
      notebookId: 'id-r',
      readiness: { document: 'pending', runtime: 'pending' },
    });
    await e.activation.activate({ key: 'r', target: pathTarget('r'), origin: 'connect', connect: async () => handle });
    expect(e.slot.access('document').handle).toBe(handle);
    expect(() => e.slot.access('mutation')).toThrowError(expect.objectContaining({ kind: 'documentNotReady' }));
    handle.setReadiness({ document: 'ready', runtime: 'pending' });
    expect(() => e.slot.access('runtime')).toThrowError(expect.objectContaining({ kind: 'runtimeNotReady' }));
    handle.setReadiness({ document: 'ready', runtime: 'unavailable', reason: 'no ipykernel' });
    expect(() => e.slot.access('runtime')).toThrow("The notebook's runtime is unavailable: no ipykernel");
    handle.setReadiness({ document: 'failed', runtime: 'unavailable', reason: 'bad JSON' });
    expect(() => e.slot.access('document')).toThrowError(expect.objectContaining({ kind: 'sourceDegraded' }));
    handle.setReadiness({ document: 'ready', runtime: 'ready' });
    const access = e.slot.access('runtime');
    await connectNow(e, 'other');
    expect(() => access.ensureCurrent()).toThrowError(expect.objectContaining({ kind: 'supersededActivation' }));
  });

  it('reports a lost connection as localSyncFailed', async () => {
    const e = engine();
    const a = await connectNow(e, 'a');
    (a.handle as FakeNotebookHandle).simulateClose('disconnected');
    expect(() => e.slot.access('document')).toThrowError(expect.objectContaining({ kind: 'localSyncFailed' }));
  });
});

describe(RejoinCoordinator, () => {
  const target = pathTarget('lost');

  it('publishes a rejoined session into an empty slot', async () => {
    const e = engine();
    const result = e.coordinator.rejoin(target, { peerLabel: 'p' });
    await settle();
    e.reopens.attempts[0]?.outcome.resolve({ kind: 'connected', handle: handleFor('lost') });
    expect(await result).toMatchObject({ kind: 'published' });
    expect(e.slot.active?.origin).toBe('rejoin');
  });

  it('lets an explicit disconnect during a background rejoin win', async () => {
    const e = engine();
    const result = e.coordinator.rejoin(target, { peerLabel: 'p' });
    await settle();
    e.slot.disconnect();
    const handle = handleFor('lost');
    e.reopens.attempts[0]?.outcome.resolve({ kind: 'connected', handle });
    expect(await result).toEqual({ kind: 'not-published', reason: 'an explicit disconnect happened meanwhile' });
    expect(e.slot.active).toBeUndefined();
    expect(handle.isClosed).toBe(true);
  });

  it('lets a tool-installed session beat a background rejoin, even for the same notebook', async () => {
    const e = engine();
    const result = e.coordinator.rejoin(target, { peerLabel: 'p' });
    await settle();
    const installed = await connectNow(e, 'lost');
    const late = handleFor('lost');
    e.reopens.attempts[0]?.outcome.resolve({ kind: 'connected', handle: late });
    expect(await result).toEqual({ kind: 'not-published', reason: 'another session is installed' });
    expect(e.slot.active).toBe(installed);
    expect(late.isClosed).toBe(true);
    expect(installed.handle.isClosed).toBe(false);
  });

  it('records Evicted for a definitive refusal, keeps nothing for retry-later, and refuses when verification fails', async () => {
    const e = engine();
    const evicted = e.coordinator.rejoin(
      { kind: 'notebook-id', notebookId: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90' },
      { peerLabel: 'p' },
    );
    await settle();
    e.reopens.attempts[0]?.outcome.resolve({ kind: 'evicted', reason: 'notebook_unavailable' });
    expect((await evicted).kind).toBe('evicted');
    expect(e.slot.lastDrop?.reason).toBe('evicted');
    const later = e.coordinator.rejoin(target, { peerLabel: 'p' });
    await settle();
    e.reopens.attempts[1]?.outcome.resolve({ kind: 'retry-later', reason: 'daemon busy' });
    expect(await later).toEqual({ kind: 'retry-later', reason: 'daemon busy' });
    const unverified = e.coordinator.rejoin(target, { peerLabel: 'p', verify: async () => false });
    await settle();
    const handle = handleFor('lost');
    e.reopens.attempts[2]?.outcome.resolve({ kind: 'connected', handle });
    expect((await unverified).kind).toBe('retry-later');
    expect(handle.isClosed).toBe(true);
    expect(e.slot.active).toBeUndefined();
  });

  it('treats a target of a kind no backend handles as evicted', async () => {
    const e = engine();
    const result = await e.coordinator.rejoin(
      {
        kind: 'hosted-url',
        url: 'http://h/lab/tree/a.ipynb',
        serverUrl: 'http://h/',
        notebookPath: 'a.ipynb',
        token: undefined,
      },
      { peerLabel: 'p' },
    );
    expect(result.kind).toBe('evicted');
  });
});
