import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The environment variables {@link userCacheDir} reads. */
export interface UserCacheEnvironment {
  readonly XDG_CACHE_HOME?: string;
  readonly HOME?: string;
}

/**
 * The user's cache directory: `$XDG_CACHE_HOME` when it is set to an absolute path (the XDG rule:
 * a relative value is ignored), else `~/Library/Caches` on macOS and `~/.cache` elsewhere, with `~`
 * from `HOME` (else the OS home directory). Pure apart from that fallback.
 */
export function userCacheDir(
  env: UserCacheEnvironment = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const xdg = env.XDG_CACHE_HOME?.trim();
  if (xdg && isAbsolute(xdg)) return xdg;
  const home = env.HOME?.trim() || homedir();
  return platform === 'darwin' ? join(home, 'Library', 'Caches') : join(home, '.cache');
}
