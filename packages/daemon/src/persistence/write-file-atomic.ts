import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DaemonError } from '../daemon-error.js';

/**
 * Writes `text` (a string, or its pieces in order: a large text is never one string) so that readers see the old content or the new, never a torn file: a temp file in
 * the same directory, fsync, rename over the target, then fsync of the directory.
 *
 * The file stays the user's: when the target exists, the new file gets its permission bits, and
 * its owner and group when this process may set them (as root, or as the owner choosing one of its
 * groups); a failed chown is not an error. A new file gets `mode` (less the umask). A file
 * without any write permission bit is not replaced: that rejects with `fileReadOnly`.
 *
 * Resolves to the stat of the file written (taken from its handle before the rename), so a caller
 * that compares the file later compares it with what it wrote, not with whatever is there by the
 * time this resolves.
 */
export async function writeFileAtomic(path: string, text: string | Iterable<string>, mode = 0o644): Promise<Stats> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const existing = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing && (existing.mode & 0o222) === 0) {
    // The rename would replace it regardless of its mode (and root may write anything): a file
    // its owner made read-only is left as it is.
    throw new DaemonError(
      'fileReadOnly',
      `${path} is read-only (mode ${(existing.mode & 0o777).toString(8).padStart(4, '0')}), so it is left as it is; the daemon keeps every edit. Make it writable (chmod u+w) and the next save writes them.`,
    );
  }
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let written: Stats;
  try {
    const file = await open(temp, 'wx', existing ? 0o600 : mode);
    try {
      if (existing) await keepOwnership(file, existing);
      if (typeof text === 'string') await file.writeFile(text, 'utf8');
      else for (const chunk of text) await file.write(chunk, null, 'utf8');
      await file.sync();
      written = await file.stat();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  try {
    const directory = await open(dir, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch {
    // Some file systems cannot fsync a directory; the rename is still atomic there.
  }
  return written;
}

async function keepOwnership(
  file: { chmod(mode: number): Promise<void>; chown(uid: number, gid: number): Promise<void> },
  existing: Stats,
): Promise<void> {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (existing.uid !== uid || existing.gid !== gid) {
    await file.chown(existing.uid, existing.gid).catch(() => undefined);
  }
  // After chown: changing the owner may clear set-id bits.
  await file.chmod(existing.mode & 0o7777);
}
