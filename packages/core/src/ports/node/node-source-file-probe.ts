import { realpath, stat } from 'node:fs/promises';
import type { SourceFileProbe, SourceFileState } from '../source-file-probe.js';

/** The real file system. A directory counts as missing: it cannot be a notebook's source. */
export class NodeSourceFileProbe implements SourceFileProbe {
  public async probe(path: string): Promise<SourceFileState> {
    try {
      const canonicalPath = await realpath(path);
      const info = await stat(canonicalPath);
      return info.isFile() ? { kind: 'present', canonicalPath } : { kind: 'missing' };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      return { kind: 'unknown', reason: (error as Error).message };
    }
  }
}
