import { join } from 'node:path';
import { userCacheDir } from '@nteract-mcp/foundation';

/** The environment variables socket discovery reads. */
export interface RuntimedSocketEnvironment {
  readonly RUNTIMED_SOCKET_PATH?: string;
  readonly XDG_RUNTIME_DIR?: string;
  readonly XDG_CACHE_HOME?: string;
  readonly HOME?: string;
}

/**
 * Where the local daemon `runtimed` listens, as both the daemon and its clients agree:
 * `RUNTIMED_SOCKET_PATH` when set (trimmed, non-empty); else `$XDG_RUNTIME_DIR/runt/runtimed.sock`;
 * else `runt/runtimed.sock` under the user cache dir (foundation's `userCacheDir`: an absolute
 * `$XDG_CACHE_HOME`, else `~/Library/Caches` on macOS, `~/.cache` elsewhere).
 */
export function resolveRuntimedSocketPath(
  env: RuntimedSocketEnvironment = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const explicit = env.RUNTIMED_SOCKET_PATH?.trim();
  if (explicit) return explicit;
  const runtimeDir = env.XDG_RUNTIME_DIR?.trim();
  if (runtimeDir) return join(runtimeDir, 'runt', 'runtimed.sock');
  return join(userCacheDir(env, platform), 'runt', 'runtimed.sock');
}
