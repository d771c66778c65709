import { isInternalVariable } from '@nteract-mcp/runtimed-protocol';

/** What a kernel gets of the daemon's own environment when its client sent none (an older runt-mcp). */
const fallbackVariables = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM'];

/** The base environment of a kernel (the kernelspec's `env` and `JPY_PARENT_PID` go on top), and the names left out. */
export interface KernelEnvironmentChoice {
  readonly env: Record<string, string>;
  /** Names only, never values. */
  readonly withheld: readonly string[];
}

/**
 * The environment a room's kernel starts with: the client's (as it sent it, already without what
 * its settings withhold), minus the product's internal variables (`NTERACT_MCP_*`, `RUNTIMED_*`)
 * should any be there. Without a client environment, only the basics of the daemon's own
 * (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TMPDIR`,
 * `TERM`): the daemon's environment is whatever client happened to start it. Debian's debugpy
 * gets `PYDEVD_DISABLE_FILE_VALIDATION=1` unless the client set it (it warns on every start
 * otherwise). Pure.
 */
export function buildKernelEnvironment(
  clientEnv: Readonly<Record<string, string>> | undefined,
  daemonEnv: Readonly<Record<string, string | undefined>>,
): KernelEnvironmentChoice {
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  if (clientEnv !== undefined) {
    for (const [name, value] of Object.entries(clientEnv)) {
      if (isInternalVariable(name)) withheld.push(name);
      else env[name] = value;
    }
  } else {
    for (const [name, value] of Object.entries(daemonEnv)) {
      if (value !== undefined && (fallbackVariables.includes(name) || name.startsWith('LC_'))) env[name] = value;
    }
  }
  env.PYDEVD_DISABLE_FILE_VALIDATION ??= '1';
  return { env, withheld: withheld.sort() };
}
