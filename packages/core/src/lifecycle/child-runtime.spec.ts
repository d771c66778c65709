import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createChildMcpServer } from '../child-server/create-child-mcp-server.js';
import type { ChildHandoff } from '../handoff/handoff-contract.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { type ChildLifecycleContext, RecoveryLoop } from '../recovery/recovery-loop.js';
import { SessionActivation } from '../session/session-activation.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { fakeInitializeEraPlugin } from '../testing/fake-initialize-era.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { ChildRuntime, defaultStartupWaitMs } from './child-runtime.js';

/** Stands in for the recovery loop: records its start and stop; its start work ends when `finishStart` is called. */
class RecordingRecoveryLoop {
  public context: ChildLifecycleContext | undefined;
  public readonly journal: string[] = [];
  #finish: (() => void) | undefined;

  public constructor(private readonly slowStart = false) {}

  public onStart(context: ChildLifecycleContext): Promise<void> | undefined {
    this.context = context;
    this.journal.push('start');
    if (!this.slowStart) return undefined;
    return new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  public finishStart(): void {
    this.#finish?.();
  }

  public onStop(): void {
    this.journal.push('stop');
  }
}

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function setup(options: { handoff?: ChildHandoff; slowStart?: boolean } = {}) {
  const loop = new RecordingRecoveryLoop(options.slowStart);
  const { journal } = loop;
  const clock = new ManualClock();
  const container = createTestContainer({ plugins: [fakeInitializeEraPlugin()] })
    .override(RecoveryLoop, loop as unknown as RecoveryLoop)
    .override(Clock, clock)
    .override(Logger, new RecordingLogger())
    .build();
  const child = createChildMcpServer(container, { version: '0.0.0', cwd: '/', agentSession: 'feedc0de' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  let serving = false;
  const start = serverTransport.start.bind(serverTransport);
  serverTransport.start = async () => {
    serving = true;
    await start();
  };
  const runtime = container.get(ChildRuntime);
  const exit = runtime.run({ child, transport: serverTransport, handoff: options.handoff ?? {}, cwd: '/' });
  const connectClient = async () => {
    const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1' });
    clients.push(client);
    await client.connect(clientTransport);
    return client;
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { journal, loop, clock, container, runtime, exit, connectClient, serving: () => serving, settle };
}

describe(ChildRuntime, () => {
  it('without a handoff, starts the recovery loop once the client initialized; stops it on stop', async () => {
    const t = setup();
    await t.settle();
    expect(t.journal).toEqual([]);
    expect(t.serving()).toBe(true);
    await t.connectClient();
    await expect.poll(() => t.journal).toEqual(['start']);
    expect(t.loop.context?.peerLabel()).toBe('Claude Code agent:claude-code:feedc0de');
    await t.runtime.stop(0, 'test');
    expect(t.journal).toEqual(['start', 'stop']);
    await expect(t.exit).resolves.toBe(0);
  });

  it('with a handoff, serves once the start-up work is over, using the proxy’s label until the client initializes', async () => {
    const t = setup({ handoff: { rejoinNotebook: '/n/a.ipynb', peerLabel: 'Proxy label' }, slowStart: true });
    await t.settle();
    expect(t.journal).toEqual(['start']);
    expect(t.loop.context?.handoff.rejoinNotebook).toBe('/n/a.ipynb');
    expect(t.loop.context?.peerLabel()).toBe('Proxy label');
    expect(t.serving()).toBe(false);
    t.loop.finishStart();
    await expect.poll(() => t.serving()).toBe(true);
    await t.connectClient();
    expect(t.loop.context?.peerLabel()).toBe('Claude Code agent:claude-code:feedc0de');
    // Starting happened once: the client's initialize does not start them again.
    expect(t.journal).toEqual(['start']);
  });

  it('serves anyway once the bounded wait on the clock is over', async () => {
    const t = setup({ handoff: { rejoinNotebook: '/n/a.ipynb' }, slowStart: true });
    await t.settle();
    await t.clock.advanceAndSettle(defaultStartupWaitMs - 1);
    expect(t.serving()).toBe(false);
    await t.clock.advanceAndSettle(1);
    await expect.poll(() => t.serving()).toBe(true);
  });

  it('stops with the code the loop asks for, once, closing the peer of every session', async () => {
    const t = setup({ handoff: { rejoinNotebook: '/n/a.ipynb' } });
    await t.settle();
    const activation = t.container.get(SessionActivation);
    const handles = [new FakeNotebookHandle({ notebookId: 'a' }), new FakeNotebookHandle({ notebookId: 'b' })];
    for (const handle of handles) {
      await activation.activate({
        key: handle.notebookId,
        target: { kind: 'notebook-id', notebookId: handle.notebookId },
        origin: 'connect',
        connect: async () => handle,
      });
    }
    t.loop.context?.requestExit(75, 'daemon version changed');
    t.loop.context?.requestExit(1, 'too late');
    await expect(t.exit).resolves.toBe(75);
    expect(handles.map((handle) => handle.isClosed)).toEqual([true, true]);
    expect(t.journal).toEqual(['start', 'stop']);
  });
});
