import { youngGenerationFlags } from '@nteract-mcp/foundation';

/**
 * The Node arguments of the detached daemon `runtimed start` spawns: a capped young generation
 * (foundation's `youngGenerationFlags`: a daemon lives for days), the bin, the caller's arguments
 * and `--foreground`.
 */
export function detachedDaemonArguments(
  entry: string,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  return [...youngGenerationFlags(env), entry, ...argv, '--foreground'];
}
