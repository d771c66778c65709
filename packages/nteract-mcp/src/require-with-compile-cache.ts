import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { constants, Script } from 'node:vm';

/** A CommonJS file run by {@link requireWithCompileCache}. */
export interface CompileCachedModule {
  /** What the file put in `module.exports`. */
  readonly exports: unknown;
  /** Whether it was compiled from a cache written by an earlier start. */
  readonly fromCache: boolean;
  /**
   * Writes the code V8 has compiled for the file so far for the next start (call it once start-up
   * has run, so the functions it used are in it; again later, and the cache has more of the code).
   * Never throws: a cache that cannot be written only costs the next start its compile time.
   */
  saveCompileCache(): boolean;
}

/**
 * Runs a CommonJS file as `require` would, but compiled from a V8 code cache under `cacheDir` when
 * an earlier start left one for this very file (same size and mtime), this Node and V8 (Node 20 has
 * no compile cache of its own for files). V8 checks the cache against the source too and compiles
 * afresh if it does not match. A missing or unreadable cache is no error.
 */
export function requireWithCompileCache(file: string, cacheDir: string): CompileCachedModule {
  const stats = statSync(file);
  const prefix = `${basename(file)}.`;
  const cacheFile = join(
    cacheDir,
    `${prefix}${process.version}.${cachedDataVersionTag()}.${stats.size}.${Math.trunc(stats.mtimeMs)}.bin`,
  );
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The function Node wraps a CommonJS file in.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(file, 'utf8')}\n});`;
  const script = new Script(wrapped, {
    filename: file,
    cachedData,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return {
    get exports() {
      return module.exports;
    },
    fromCache,
    saveCompileCache() {
      const partial = `${cacheFile}.${process.pid}.partial`;
      try {
        mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
        writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
        renameSync(partial, cacheFile);
        // Caches of earlier versions of the file are of no more use.
        for (const name of readdirSync(cacheDir)) {
          if (name.startsWith(prefix) && name.endsWith('.bin') && join(cacheDir, name) !== cacheFile)
            rmSync(join(cacheDir, name), { force: true });
        }
        return true;
      } catch {
        try {
          rmSync(partial, { force: true });
        } catch {
          // Nothing more to do: the cache dir is not ours to write.
        }
        return false;
      }
    },
  };
}
