import { Container, type ServiceIdentifier } from 'inversify';
import { assertValidContributions, type Contribution, listContributionPoints } from '../di/contribution-point.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { assertValidPluginId, type McpPlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
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
 * Builds the root container: core bindings, then each plugin's module, then validation of every
 * contribution point. Fails with a {@link CoreError} for an invalid or duplicate plugin id, an
 * unknown `specificationVersion`, or a contribution that cannot be created.
 */
export function createMcpContainer(options: McpContainerOptions): Container {
  return buildMcpContainer(options.plugins, []);
}

/** {@link createMcpContainer} with bindings replaced before validation. Not part of the public API. */
export function buildMcpContainer(plugins: readonly McpPlugin[], overrides: readonly BindingOverride[]): Container {
  const seen = new Set<string>();
  for (const plugin of plugins) {
    assertValidPluginId(plugin?.id);
    if (seen.has(plugin.id)) {
      throw new CoreError(
        'duplicatePluginId',
        `Two plugins share the id '${plugin.id}': each plugin may be listed once in createMcpContainer({ plugins }).`,
      );
    }
    seen.add(plugin.id);
  }

  const container = new Container({ defaultScope: 'Singleton' });
  container.load(createCoreModule(), ...plugins.map((plugin) => plugin.module));
  for (const override of overrides) {
    if (container.isBound(override.token)) container.unbind(override.token);
    container.bind(override.token).toConstantValue(override.value);
  }

  for (const point of listContributionPoints()) {
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
