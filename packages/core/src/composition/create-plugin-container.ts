import { Container, type ContainerModule, type ServiceIdentifier } from 'inversify';
import { assertValidContributions, type Contribution } from '../di/contribution-point.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { assertValidPluginId, type McpPlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { contributionPoints } from './contribution-points.js';
import { createCoreModule } from './core-module.js';

export interface McpContainerOptions {
  /** The plugins, in order. The composition is exactly this list. */
  readonly plugins: readonly McpPlugin[];
}

/** A binding to replace after the plugins have loaded (used by the test container builder). */
export interface BindingOverride {
  readonly token: ServiceIdentifier<unknown>;
  readonly value: unknown;
}

/**
 * Builds a container of core's generic bindings and the plugins' contributions, without the
 * child's session engine: for a process that only consumes contributions, as the proxy does (it
 * neither builds nor loads the engine). Validates like `createMcpContainer`.
 */
export function createPluginContainer(options: McpContainerOptions): Container {
  return composeContainer([], options.plugins, []);
}

/**
 * Core's module, then `coreModules`, then each plugin's module; then the overrides, then validation
 * of every contribution point. Fails with a {@link CoreError} for an invalid or duplicate plugin id,
 * an unknown `specificationVersion`, or a contribution that cannot be created. Not part of the
 * public API.
 */
export function composeContainer(
  coreModules: readonly ContainerModule[],
  plugins: readonly McpPlugin[],
  overrides: readonly BindingOverride[],
): Container {
  const seen = new Set<string>();
  for (const plugin of plugins) {
    assertValidPluginId(plugin?.id);
    if (seen.has(plugin.id)) {
      throw new CoreError(
        'duplicatePluginId',
        `Two plugins share the id '${plugin.id}': each plugin may be listed once in a container's plugins.`,
      );
    }
    seen.add(plugin.id);
  }

  const container = new Container({ defaultScope: 'Singleton' });
  container.load(createCoreModule(), ...coreModules, ...plugins.map((plugin) => plugin.module));
  for (const override of overrides) {
    if (container.isBound(override.token)) container.unbind(override.token);
    container.bind(override.token).toConstantValue(override.value);
  }

  for (const point of contributionPoints) {
    let contributions: readonly Contribution[];
    try {
      contributions = container.get(ContributionProvider, { name: point.token }).getContributions();
    } catch (error) {
      if (CoreError.is(error)) throw error;
      throw new CoreError(
        'invalidContribution',
        `${point.name}: a contribution could not be created: ${(error as Error).message}`,
        { cause: error },
      );
    }
    assertValidContributions(point, contributions);
  }
  return container;
}
