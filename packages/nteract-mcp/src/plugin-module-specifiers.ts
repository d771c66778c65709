import { delimiter } from 'node:path';

// Free of the framework's modules on purpose: the `runt-mcp` bin reads these before it chooses what
// to load (see runt-mcp.ts).

/** The variable listing extra plugin modules for `runt-mcp`, separated like `PATH` (`:` on Unix). */
export const pluginModulesEnvironmentVariable = 'NTERACT_MCP_PLUGINS';

/** The module specifiers named by `--plugin` arguments and then by {@link pluginModulesEnvironmentVariable}. */
export function pluginModuleSpecifiers(
  flags: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const listed = (env[pluginModulesEnvironmentVariable] ?? '').split(delimiter);
  return [...flags, ...listed].map((item) => item.trim()).filter((item) => item.length > 0);
}

/** Whether `runt-mcp` with these arguments and this environment loads a third-party plugin module. */
export function namesPluginModules(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return argv.includes('--plugin') || pluginModuleSpecifiers([], env).length > 0;
}
