/** Prefixes of the product's own variables: never in a kernel's environment, whatever the settings say. */
export const internalVariablePrefixes: readonly string[] = ['NTERACT_MCP_', 'RUNTIMED_'];

/** Tokens of hosted servers: withheld from kernels unless `NTERACT_MCP_KERNEL_ENV_KEEP` names them. */
export const hostedTokenVariables: readonly string[] = ['JUPYTER_TOKEN', 'JPY_API_TOKEN', 'JUPYTERHUB_API_TOKEN'];

/** What {@link kernelEnvironmentOf} made of an environment: the variables kept, and the names withheld. */
export interface KernelEnvironment {
  readonly env: Record<string, string>;
  /** Names only (never values), sorted. */
  readonly withheld: readonly string[];
}

/**
 * The environment a client's kernels get: the client's `env` without the product's internal
 * variables (`NTERACT_MCP_*`, `RUNTIMED_*`), without hosted-server tokens (`JUPYTER_TOKEN`,
 * `JPY_API_TOKEN`, `JUPYTERHUB_API_TOKEN`) unless `NTERACT_MCP_KERNEL_ENV_KEEP` names them, and
 * without what `NTERACT_MCP_KERNEL_ENV_DROP` names. Both settings are comma-separated names; a
 * name ending in `*` is a prefix (`AWS_*`). Unset values are skipped. Pure.
 */
export function kernelEnvironmentOf(env: Readonly<Record<string, string | undefined>>): KernelEnvironment {
  const drop = nameMatcher(env.NTERACT_MCP_KERNEL_ENV_DROP);
  const keep = nameMatcher(env.NTERACT_MCP_KERNEL_ENV_KEEP);
  const kept: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const internal = isInternalVariable(name);
    const token = hostedTokenVariables.includes(name) && !keep(name);
    if (internal || token || drop(name)) withheld.push(name);
    else kept[name] = value;
  }
  return { env: kept, withheld: withheld.sort() };
}

/** Whether `name` is one of the product's internal variables (`NTERACT_MCP_*`, `RUNTIMED_*`). */
export function isInternalVariable(name: string): boolean {
  return internalVariablePrefixes.some((prefix) => name.startsWith(prefix));
}

function nameMatcher(setting: string | undefined): (name: string) => boolean {
  const entries = (setting ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const exact = new Set(entries.filter((entry) => !entry.endsWith('*')));
  const prefixes = entries.filter((entry) => entry.endsWith('*')).map((entry) => entry.slice(0, -1));
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}
