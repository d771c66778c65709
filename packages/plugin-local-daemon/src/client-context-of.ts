import type { Logger } from '@nteract-mcp/core';
import { kernelEnvironmentOf, type WireClientContext } from '@nteract-mcp/runtimed-protocol';

/**
 * How much of the handshake the environment may take: a handshake frame is at most 64 KiB, and
 * the rest of the handshake (path, label) needs room too.
 */
const envBudgetBytes = 48 * 1024;

/**
 * The client context sent with every open, attach, create and list_kernels: `cwd`, and the
 * environment of `kernelEnv` as {@link kernelEnvironmentOf} keeps it. When that is too big for a
 * handshake, the largest variables are left out (their names logged as a warning). Withheld names
 * are logged at debug level; values never are.
 */
export function clientContextOf(
  kernelEnv: Readonly<Record<string, string | undefined>>,
  cwd: string,
  logger: Logger,
): WireClientContext {
  const { env, withheld } = kernelEnvironmentOf(kernelEnv);
  if (withheld.length > 0) logger.debug('variables withheld from kernels', { names: withheld });
  const sizeOf = (name: string): number => Buffer.byteLength(name) + Buffer.byteLength(env[name] ?? '') + 6;
  let total = Object.keys(env).reduce((sum, name) => sum + sizeOf(name), 0);
  if (total > envBudgetBytes) {
    const tooBig: string[] = [];
    for (const name of Object.keys(env).sort((a, b) => sizeOf(b) - sizeOf(a))) {
      if (total <= envBudgetBytes) break;
      total -= sizeOf(name);
      delete env[name];
      tooBig.push(name);
    }
    logger.warn('the environment is too large to pass to kernels whole; left out its largest variables', {
      names: tooBig,
    });
  }
  return { cwd, env };
}
