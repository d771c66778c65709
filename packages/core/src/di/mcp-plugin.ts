import type { ContainerModule } from 'inversify';
import { CoreError } from '../errors/core-error.js';

/**
 * A unit of composition: an id and the container module it loads. Plugins only contribute
 * bindings (ports, contribution points); invariants stay in core. Made by a `createXPlugin(options)`
 * factory and listed explicitly by the application in `createMcpContainer({ plugins })`.
 */
export interface McpPlugin {
  /** Unique, dotted, lowercase: `local-daemon`, `acme.git-rejoin`. */
  readonly id: string;
  readonly module: ContainerModule;
}

const pluginIdPattern = /^[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*$/;

/** Checks a plugin's id and freezes it. Throws `invalidPluginId` for an id that is not dotted lowercase. */
export function definePlugin(plugin: McpPlugin): McpPlugin {
  assertValidPluginId(plugin.id);
  return Object.freeze({ id: plugin.id, module: plugin.module });
}

export function assertValidPluginId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !pluginIdPattern.test(id)) {
    throw new CoreError(
      'invalidPluginId',
      `Plugin id ${JSON.stringify(id)} is invalid: use lowercase words joined by dots or dashes, e.g. 'acme.git-rejoin'`,
    );
  }
}
