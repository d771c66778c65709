import { ContainerModule, inject, injectable, named } from 'inversify';
import { describe, expect, it } from 'vitest';
import { NotebookBackend } from '../contributions/notebook-backend.js';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { RecoveryContribution } from '../contributions/recovery-contribution.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { definePlugin, type McpPlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { ChildRuntime } from '../lifecycle/child-runtime.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { RecoveryLoop } from '../recovery/recovery-loop.js';
import { SessionSlot } from '../session/session-slot.js';
import { FakeNotebookBackend } from '../testing/fake-notebook-backend.js';
import { createMcpContainer } from './create-mcp-container.js';
import { createPluginContainer } from './create-plugin-container.js';

function recovery(id: string, specificationVersion = 'v1'): RecoveryContribution {
  return {
    id,
    specificationVersion: specificationVersion as 'v1',
    handles: () => false,
    start: () => undefined,
    stop: () => undefined,
    idle: async () => undefined,
  };
}

function recoveryPlugin(pluginId: string, ...recoveries: RecoveryContribution[]): McpPlugin {
  return definePlugin({
    id: pluginId,
    module: new ContainerModule(({ bind }) => {
      for (const item of recoveries) bind(RecoveryContribution).toConstantValue(item);
    }),
  });
}

@injectable()
class RecoveryConsumer {
  public constructor(
    @inject(ContributionProvider)
    @named(RecoveryContribution)
    public readonly recoveries: ContributionProvider<RecoveryContribution>,
    @inject(Clock) public readonly clock: Clock,
  ) {}
}

describe(createMcpContainer, () => {
  it('builds with no plugins and binds the generic ports', () => {
    const container = createMcpContainer({ plugins: [] });
    expect(typeof container.get(Clock).now()).toBe('number');
    expect(container.get(Logger)).toBeDefined();
  });

  it('holds the session engine and the recovery loop the child runtime starts', () => {
    const container = createMcpContainer({ plugins: [] });
    expect(container.get(ChildRuntime)).toBeInstanceOf(ChildRuntime);
    expect(container.get(SessionSlot)).toBe(container.get(SessionSlot));
    expect(container.get(RecoveryLoop)).toBe(container.get(RecoveryLoop));
  });

  it('refuses two plugins with the same id, naming the id', () => {
    const build = () =>
      createMcpContainer({ plugins: [recoveryPlugin('acme.recovery'), recoveryPlugin('acme.recovery')] });
    expect(build).toThrowError(/Two plugins share the id 'acme\.recovery'/);
    try {
      build();
    } catch (error) {
      expect(CoreError.is(error, 'duplicatePluginId')).toBe(true);
    }
  });

  it('refuses a plugin id that is not dotted lowercase', () => {
    expect(() => definePlugin({ id: 'Acme Rejoin', module: new ContainerModule(() => undefined) })).toThrowError(
      expect.objectContaining({ kind: 'invalidPluginId' }),
    );
    expect(() =>
      createMcpContainer({ plugins: [{ id: '', module: new ContainerModule(() => undefined) }] }),
    ).toThrowError(expect.objectContaining({ kind: 'invalidPluginId' }));
  });

  it('refuses a contribution with an unknown specificationVersion, naming point, id and versions', () => {
    const build = () => createMcpContainer({ plugins: [recoveryPlugin('acme.future', recovery('acme.future', 'v9'))] });
    expect(build).toThrowError(
      "RecoveryContribution 'acme.future' declares specificationVersion 'v9'; this core supports 'v1'.",
    );
    expect(build).toThrowError(expect.objectContaining({ kind: 'unknownSpecificationVersion' }));
  });

  it('refuses two contributions with the same id to one point, across plugins', () => {
    const build = () =>
      createMcpContainer({
        plugins: [recoveryPlugin('acme.one', recovery('acme.same')), recoveryPlugin('acme.two', recovery('acme.same'))],
      });
    expect(build).toThrowError(expect.objectContaining({ kind: 'duplicateContributionId' }));
  });

  it('refuses a contribution without an id', () => {
    const build = () => createMcpContainer({ plugins: [recoveryPlugin('acme.bad', recovery(''))] });
    expect(build).toThrowError(expect.objectContaining({ kind: 'invalidContribution' }));
  });

  it('reports a contribution that cannot be created, naming the point', () => {
    @injectable()
    class NeedsDaemon implements RecoveryContribution {
      public readonly id = 'acme.needs';
      public readonly specificationVersion = 'v1';
      public constructor(@inject(Symbol.for('@nteract-mcp/test/Unbound')) public readonly dep: unknown) {}
      public handles(): boolean {
        return false;
      }
      public start(): void {}
      public stop(): void {}
      public async idle(): Promise<void> {}
    }
    const plugin = definePlugin({
      id: 'acme.needs',
      module: new ContainerModule(({ bind }) => {
        bind(RecoveryContribution).to(NeedsDaemon);
      }),
    });
    expect(() => createMcpContainer({ plugins: [plugin] })).toThrowError(
      /^RecoveryContribution: a contribution could not be created/,
    );
  });
});

describe(ContributionProvider.description ?? 'ContributionProvider', () => {
  it('gives [] when nothing is contributed', () => {
    const consumer = resolveConsumer([]);
    expect(consumer.recoveries.getContributions()).toEqual([]);
  });

  it('gives the contributions in plugin order, as the same frozen array on every call', () => {
    const a = recovery('acme.a');
    const b = recovery('acme.b');
    const c = recovery('acme.c');
    const consumer = resolveConsumer([recoveryPlugin('acme.first', a, b), recoveryPlugin('acme.second', c)]);
    const first = consumer.recoveries.getContributions();
    expect(first).toEqual([a, b, c]);
    expect(consumer.recoveries.getContributions()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('lets a contribution depend on a service that reads its own point (a backend opening through another kind)', () => {
    @injectable()
    class Delegating extends FakeNotebookBackend {
      public constructor(@inject(NotebookTargetResolver) public readonly resolver: NotebookTargetResolver) {
        super({
          id: 'acme.delegating',
          kind: 'acme.delegating',
          argument: 'url',
          identity: { describe: () => 'delegating' },
          recognizes: () => false,
          parse: () => ({ kind: 'acme.delegating' }),
          connect: () => Promise.reject(new CoreError('unsupportedOperation', 'not in this test')),
        });
      }
    }
    const plugin = definePlugin({
      id: 'acme.delegating',
      module: new ContainerModule(({ bind }) => {
        bind(NotebookBackend).to(Delegating).inSingletonScope();
      }),
    });
    const container = createMcpContainer({ plugins: [plugin] });
    const resolver = container.get(NotebookTargetResolver);
    expect(resolver.supportedKinds()).toEqual(['acme.delegating']);
    expect((resolver.backendFor({ kind: 'acme.delegating' }) as Delegating).resolver).toBe(resolver);
  });

  it('resolves a class whose constructor parameters all carry @inject (vitest transform)', () => {
    const consumer = resolveConsumer([]);
    expect(typeof consumer.clock.now()).toBe('number');
    const resolver = createMcpContainer({ plugins: [] }).get(NotebookTargetResolver);
    expect(resolver.supportedKinds()).toEqual([]);
  });
});

function resolveConsumer(plugins: readonly McpPlugin[]): RecoveryConsumer {
  const container = createMcpContainer({ plugins });
  container.bind(RecoveryConsumer).toSelf();
  return container.get(RecoveryConsumer);
}

describe(createPluginContainer, () => {
  it('holds the generic ports and the plugins, without the session engine', () => {
    const container = createPluginContainer({ plugins: [recoveryPlugin('acme.recovery', recovery('acme.a'))] });
    expect(typeof container.get(Clock).now()).toBe('number');
    expect(container.getAll(RecoveryContribution).map((item) => item.id)).toEqual(['acme.a']);
    expect(container.isBound(ChildRuntime)).toBe(false);
    expect(container.isBound(SessionSlot)).toBe(false);
    expect(container.isBound(RecoveryLoop)).toBe(false);
  });

  it('validates as createMcpContainer does', () => {
    expect(() =>
      createPluginContainer({ plugins: [recoveryPlugin('acme.recovery', recovery('a', 'v9'))] }),
    ).toThrowError(expect.objectContaining({ kind: 'unknownSpecificationVersion' }));
  });
});
