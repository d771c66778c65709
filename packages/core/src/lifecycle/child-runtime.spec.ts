import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import { createChildMcpServer } from '../child-server/create-child-mcp-server.js';
import {
  type ChildLifecycleContext,
  ChildLifecycleContribution,
} from '../contributions/child-lifecycle-contribution.js';
import { definePlugin } from '../di/mcp-plugin.js';
import type { ChildHandoff } from '../handoff/handoff-contract.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { SessionActivation } from '../session/session-activation.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { fakeInitializeEraPlugin } from '../testing/fake-initialize-era.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { ChildRuntime, defaultStartupWaitMs } from './child-runtime.js';

/** Records its start and stop in a shared journal; its start work ends when `finishStart` is called. */
class RecordingContribution implements ChildLifecycleContribution {
  public readonly specificationVersion = 'v1';
  public context: ChildLifecycleContext | undefined;
  #finish: (() => void) | undefined;

  public constructor(
    public readonly id: string,
    private readonly journal: string[],
    private readonly slowStart = false,
  ) {}

  public onStart(context: ChildLifecycleContext): Promise<void> | undefined {
    this.context = context;
    this.journal.push(`start ${this.id}`);
    if (!this.slowStart) return undefined;
    return new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  public finishStart(): void {
    this.#finish?.();
  }

  public onStop(): void {
    this.journal.push(`stop ${this.id}`);
  }
}

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function setup(options: { handoff?: ChildHandoff; slowStart?: boolean } = {}) {
  const journal: string[] = [];
  const first = new RecordingContribution('test.first', journal, options.slowStart);
  const second = new RecordingContribution('test.second', journal);
  const plugin = definePlugin({
    id: 'test.lifecycle',
    module: new ContainerModule(({ bind }) => {
      bind(ChildLifecycleContribution).toConstantValue(first);
      bind(ChildLifecycleContribution).toConstantValue(second);
    }),
  });
  const clock = new ManualClock();
  const container = createTestContainer({ plugins: [fakeInitializeEraPlugin(), plugin] })
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
  return { journal, first, second, clock, container, runtime, exit, connectClient, serving: () => serving, settle };
}

describe(ChildRuntime, () => {
  it('without a handoff, starts the contributions in order once the client initialized; stops them in reverse', async () => {
    const t = setup();
    await t.settle();
    expect(t.journal).toEqual([]);
    expect(t.serving()).toBe(true);
    await t.connectClient();
    await expect.poll(() => t.journal).toEqual(['start test.first', 'start test.second']);
    // Core's recovery loop is the first contribution, so it starts before every plugin's.
    expect(t.container.getAll(ChildLifecycleContribution).map((contribution) => contribution.id)).toEqual([
      'core.recovery-loop',
      'test.first',
      'test.second',
    ]);
    expect(t.first.context?.peerLabel()).toBe('Claude Code agent:claude-code:feedc0de');
    await t.runtime.stop(0, 'test');
    expect(t.journal.slice(2)).toEqual(['stop test.second', 'stop test.first']);
    await expect(t.exit).resolves.toBe(0);
  });

  it('with a handoff, serves once the start-up work is over, using the proxy’s label until the client initializes', async () => {
    const t = setup({ handoff: { rejoinNotebook: '/n/a.ipynb', peerLabel: 'Proxy label' }, slowStart: true });
    await t.settle();
    expect(t.journal).toEqual(['start test.first', 'start test.second']);
    expect(t.first.context?.handoff.rejoinNotebook).toBe('/n/a.ipynb');
    expect(t.first.context?.peerLabel()).toBe('Proxy label');
    expect(t.serving()).toBe(false);
    t.first.finishStart();
    await expect.poll(() => t.serving()).toBe(true);
    await t.connectClient();
    expect(t.first.context?.peerLabel()).toBe('Claude Code agent:claude-code:feedc0de');
    // Starting happened once: the client's initialize does not start them again.
    expect(t.journal).toEqual(['start test.first', 'start test.second']);
  });

  it('serves anyway once the bounded wait on the clock is over', async () => {
    const t = setup({ handoff: { rejoinNotebook: '/n/a.ipynb' }, slowStart: true });
    await t.settle();
    await t.clock.advanceAndSettle(defaultStartupWaitMs - 1);
    expect(t.serving()).toBe(false);
    await t.clock.advanceAndSettle(1);
    await expect.poll(() => t.serving()).toBe(true);
  });

  it('stops with the code a contribution asks for, once, closing the peer of every session', async () => {
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
    t.first.context?.requestExit(75, 'daemon version changed');
    t.first.context?.requestExit(1, 'too late');
    await expect(t.exit).resolves.toBe(75);
    expect(handles.map((handle) => handle.isClosed)).toEqual([true, true]);
    expect(t.journal).toEqual(['start test.first', 'start test.second', 'stop test.second', 'stop test.first']);
  });
});
