import type { SourceFileProbe, SourceFileState } from '../ports/source-file-probe.js';

/** Files exist only when {@link FakeSourceFileProbe.addFile} says so; `failWith` makes a path `unknown`. */
export class FakeSourceFileProbe implements SourceFileProbe {
  readonly #files = new Map<string, string>();
  readonly #failures = new Map<string, string>();
  public readonly probed: string[] = [];

  public constructor(files: readonly string[] = []) {
    for (const file of files) this.addFile(file);
  }

  /** Makes `path` present, optionally resolving (like a symlink) to `canonicalPath`. */
  public addFile(path: string, canonicalPath: string = path): this {
    this.#files.set(path, canonicalPath);
    return this;
  }

  public removeFile(path: string): this {
    this.#files.delete(path);
    return this;
  }

  public failWith(path: string, reason: string): this {
    this.#failures.set(path, reason);
    return this;
  }

  public async probe(path: string): Promise<SourceFileState> {
    this.probed.push(path);
    const failure = this.#failures.get(path);
    if (failure !== undefined) return { kind: 'unknown', reason: failure };
    const canonicalPath = this.#files.get(path);
    return canonicalPath === undefined ? { kind: 'missing' } : { kind: 'present', canonicalPath };
  }
}
