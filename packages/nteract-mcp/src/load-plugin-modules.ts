import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoreError, type McpPlugin } from '@nteract-mcp/core';

/** What a plugin module's `createPlugin` is given. */
export interface PluginModuleContext {
  /** The child's environment, for the plugin's own settings. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The child's working directory. */
  readonly cwd: string;
}

/**
 * A module that adds a plugin to the distribution's child without a bin of its own: it exports
 * `createPlugin(context)`, returning the plugin (or a promise of it).
 */
export interface PluginModule {
  createPlugin(context: PluginModuleContext): McpPlugin | Promise<McpPlugin>;
}

/**
 * Imports each module and calls its `createPlugin`. A path (absolute, or starting with `.`) is
 * resolved against `context.cwd`; anything else is a package name, resolved by Node from this
 * distribution. Fails with an `invalidContribution` {@link CoreError} naming the module on the first one that
 * cannot be imported, has no `createPlugin` function, or whose `createPlugin` throws.
 */
export async function loadPluginModules(
  specifiers: readonly string[],
  context: PluginModuleContext,
): Promise<McpPlugin[]> {
  const plugins: McpPlugin[] = [];
  for (const specifier of specifiers) {
    const isPath = isAbsolute(specifier) || specifier.startsWith('.');
    const target = isPath ? pathToFileURL(resolve(context.cwd, specifier)).href : specifier;
    let loaded: Partial<PluginModule>;
    try {
      loaded = (await import(target)) as Partial<PluginModule>;
    } catch (error) {
      throw new CoreError(
        'invalidContribution',
        `cannot load the plugin module '${specifier}': ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (typeof loaded.createPlugin !== 'function') {
      throw new CoreError(
        'invalidContribution',
        `the plugin module '${specifier}' has no createPlugin export (it must export createPlugin(context) returning the plugin)`,
      );
    }
    try {
      plugins.push(await loaded.createPlugin(context));
    } catch (error) {
      throw new CoreError(
        'invalidContribution',
        `the plugin module '${specifier}' failed to create its plugin: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  return plugins;
}
