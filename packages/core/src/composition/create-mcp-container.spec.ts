import { ContainerModule, inject, injectable, named } from 'inversify';
import { describe, expect, it } from 'vitest';
import { ChildLifecycleContribution } from '../contributions/child-lifecycle-contribution.js';
import { NotebookBackend } from '../contributions/notebook-backend.js';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { type RejoinOutcome, RejoinStrategy } from '../contributions/rejoin-strategy.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { definePlugin, type McpPlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { ChildRuntime } from '../lifecycle/child-runtime.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { SessionSlot } from '../session/session-slot.js';
import { FakeNotebookBackend } from '../testing/fake-notebook-backend.js';
import { createMcpContainer } from './create-mcp-container.js';
import { createPluginContainer } from './create-plugin-container.js';

function strategy(id: string, specificationVersion = 'v1'): RejoinStrategy {
  return {
    id,
    specificationVersion: specificationVersion as 'v1',
    supports: () => true,
    rejoin: async (): Promise<RejoinOutcome> => ({ kind: 'retry-later', reason: 'test' }),
  };
}

function strategyPlugin(pluginId: string, ...strategies: RejoinStrategy[]): McpPlugin {
  return definePlugin({
    id: pluginId,
    module: new ContainerModule(({ bind }) => {
      for (const item of strategies) bind(RejoinStrategy).toConstantValue(item);
    }),
  });
}

@injectable()
class StrategyConsumer {
  public constructor(
    @inject(ContributionProvider)
    @named(RejoinStrategy)
    public readonly strategies: ContributionProvider<RejoinStrategy>,
    @inject(Clock) public readonly clock: Clock,
  ) {}
}

describe(createMcpContainer, () => {
  it('builds with no plugins and binds the generic ports', () => {
    const container = createMcpContainer({ plugins: [] });
    expect(typeof container.get(Clock).now()).toBe('number');
    expect(container.get(Logger)).toBeDefined();
  });

  it('holds the session engine, the recovery loop first among the child lifecycle contributions', () => {
    const container = createMcpContainer({ plugins: [] });
    expect(container.get(ChildRuntime)).toBeInstanceOf(ChildRuntime);
    expect(container.get(SessionSlot)).toBe(container.get(SessionSlot));
    expect(container.getAll(ChildLifecycleContribution).map((item) => item.id)).toEqual(['core.recovery-loop']);
  });

  it('refuses two plugins with the same id, naming the id', () => {
    const build = () => createMcpContainer({ plugins: [strategyPlugin('acme.rejoin'), strategyPlugin('acme.rejoin')] });
    expect(build).toThrowError(/Two plugins share the id 'acme\.rejoin'/);
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
    const build = () => createMcpContainer({ plugins: [strategyPlugin('acme.future', strategy('acme.future', 'v9'))] });
    expect(build).toThrowError(
      "RejoinStrategy 'acme.future' declares specificationVersion 'v9'; this core supports 'v1'.",
    );
    expect(build).toThrowError(expect.objectContaining({ kind: 'unknownSpecificationVersion' }));
  });

  it('refuses two contributions with the same id to one point, across plugins', () => {
    const build = () =>
      createMcpContainer({
        plugins: [strategyPlugin('acme.one', strategy('acme.same')), strategyPlugin('acme.two', strategy('acme.same'))],
      });
    expect(build).toThrowError(expect.objectContaining({ kind: 'duplicateContributionId' }));
  });

  it('refuses a contribution without an id', () => {
    const build = () => createMcpContainer({ plugins: [strategyPlugin('acme.bad', strategy(''))] });
    expect(build).toThrowError(expect.objectContaining({ kind: 'invalidContribution' }));
  });

  it('reports a contribution that cannot be created, naming the point', () => {
    @injectable()
    class NeedsDaemon implements RejoinStrategy {
      public readonly id = 'acme.needs';
      public readonly specificationVersion = 'v1';
      public constructor(@inject(Symbol.for('@nteract-mcp/test/Unbound')) public readonly dep: unknown) {}
      public supports(): boolean {
        return false;
      }
      public rejoin(): Promise<RejoinOutcome> {
        return Promise.resolve({ kind: 'retry-later', reason: 'never' });
      }
    }
    const plugin = definePlugin({
      id: 'acme.needs',
      module: new ContainerModule(({ bind }) => {
        bind(RejoinStrategy).to(NeedsDaemon);
      }),
    });
    expect(() => createMcpContainer({ plugins: [plugin] })).toThrowError(
      /^RejoinStrategy: a contribution could not be created/,
    );
  });
});

describe(ContributionProvider.description ?? 'ContributionProvider', () => {
  it('gives [] when nothing is contributed', () => {
    const consumer = resolveConsumer([]);
    expect(consumer.strategies.getContributions()).toEqual([]);
  });

  it('gives the contributions in plugin order, as the same frozen array on every call', () => {
    const a = strategy('acme.a');
    const b = strategy('acme.b');
    const c = strategy('acme.c');
    const consumer = resolveConsumer([strategyPlugin('acme.first', a, b), strategyPlugin('acme.second', c)]);
    const first = consumer.strategies.getContributions();
    expect(first).toEqual([a, b, c]);
    expect(consumer.strategies.getContributions()).toBe(first);
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

function resolveConsumer(plugins: readonly McpPlugin[]): StrategyConsumer {
  const container = createMcpContainer({ plugins });
  container.bind(StrategyConsumer).toSelf();
  return container.get(StrategyConsumer);
}

describe(createPluginContainer, () => {
  it('holds the generic ports and the plugins, without the session engine', () => {
    const container = createPluginContainer({ plugins: [strategyPlugin('acme.rejoin', strategy('acme.a'))] });
    expect(typeof container.get(Clock).now()).toBe('number');
    expect(container.getAll(RejoinStrategy).map((item) => item.id)).toEqual(['acme.a']);
    expect(container.isBound(ChildRuntime)).toBe(false);
    expect(container.isBound(SessionSlot)).toBe(false);
    expect(container.isBound(ChildLifecycleContribution)).toBe(false);
  });

  it('validates as createMcpContainer does', () => {
    expect(() => createPluginContainer({ plugins: [strategyPlugin('acme.rejoin', strategy('a', 'v9'))] })).toThrowError(
      expect.objectContaining({ kind: 'unknownSpecificationVersion' }),
    );
  });
});
