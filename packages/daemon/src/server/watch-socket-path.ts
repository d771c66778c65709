import { type FSWatcher, lstatSync, type Stats, watch } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A running watch over the socket path; `dispose` ends it. */
export interface SocketPathWatch {
  /** Whether `path` is still the very file we bound (same device and inode). */
  isOurs(): Promise<boolean>;
  /** {@link isOurs}, synchronously (a stat): for a check that must come before acting. */
  isOursNow(): boolean;
  dispose(): void;
}

/**
 * Watches the socket file this process bound at `path`: every `intervalMs`, and at once on any
 * change in its directory, checks that the path still exists and is the same inode. When it was
 * removed (the file or its directory) or replaced by another file, clients can no longer reach
 * us: `onLost` is called, once, with why. `intervalMs` 0 turns the checks off (`isOurs` still works).
 */
export async function watchSocketPath(
  path: string,
  intervalMs: number,
  onLost: (why: string) => void,
): Promise<SocketPathWatch> {
  const identify = (stats: Stats | undefined): string | undefined =>
    stats?.isSocket() ? `${stats.dev}:${stats.ino}` : undefined;
  // Gone or not a socket already (between our bind and this look): reported at the first check.
  const bound = identify(await lstat(path).catch(() => undefined)) ?? 'lost before it was watched';
  let lost = false;
  let checking = false;
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;

  const state = async (): Promise<'ours' | 'removed' | 'replaced'> => {
    try {
      return identify(await lstat(path)) === bound ? 'ours' : 'replaced';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'removed' : 'ours';
    }
  };
  const dispose = (): void => {
    if (timer !== undefined) clearInterval(timer);
    watcher?.close();
    timer = undefined;
    watcher = undefined;
  };
  const check = async (): Promise<void> => {
    if (lost || checking) return;
    checking = true;
    try {
      const found = await state();
      if (found === 'ours' || lost) return;
      lost = true;
      dispose();
      onLost(
        found === 'removed' ? `its socket ${path} was removed` : `its socket ${path} was replaced by another file`,
      );
    } finally {
      checking = false;
    }
  };

  if (intervalMs > 0) {
    timer = setInterval(() => void check(), intervalMs);
    timer.unref();
    try {
      watcher = watch(dirname(path), { persistent: false }, () => void check());
      // The directory itself may go away; the periodic check still runs.
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  }
  const isOursNow = (): boolean => {
    try {
      return identify(lstatSync(path)) === bound;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return !(code === 'ENOENT' || code === 'ENOTDIR');
    }
  };
  return { isOurs: async () => (await state()) === 'ours', isOursNow, dispose };
}
