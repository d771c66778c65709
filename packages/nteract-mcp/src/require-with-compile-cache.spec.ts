import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { requireWithCompileCache } from './require-with-compile-cache.js';

// V8 otherwise reuses, within one process, what it compiled for the same source before, without
// looking at the cache given: a load would then count as from the cache whatever the cache held.
setFlagsFromString('--no-compilation-cache');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temp dir with a CommonJS file `entry.cjs` of `source`, and a cache dir path under it. */
function fixture(source: string): { file: string; cacheDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'compile-cache-'));
  dirs.push(root);
  const file = join(root, 'entry.cjs');
  writeFileSync(file, source);
  return { file, cacheDir: join(root, 'cache') };
}

const source = [
  "const { join } = require('node:path');",
  'exports.answer = 41 + 1;',
  'exports.where = join(__dirname, "x");',
  'exports.self = __filename;',
  'exports.double = (n) => n * 2;',
].join('\n');

describe(requireWithCompileCache, () => {
  it('runs the file like require (exports, require, __filename, __dirname) and compiles it from the cache it saved', () => {
    const { file, cacheDir } = fixture(source);
    const first = requireWithCompileCache(file, cacheDir);
    expect(first.fromCache).toBe(false);
    expect(first.exports).toMatchObject({ answer: 42, where: join(file, '..', 'x'), self: file });
    expect((first.exports as { double(n: number): number }).double(21)).toBe(42);
    expect(first.saveCompileCache()).toBe(true);
    // Saved again later (with more of the code compiled), it is still one cache file.
    expect(first.saveCompileCache()).toBe(true);
    expect(readdirSync(cacheDir)).toHaveLength(1);

    const second = requireWithCompileCache(file, cacheDir);
    expect(second.fromCache).toBe(true);
    expect(second.exports).toMatchObject({ answer: 42 });
    expect(second.saveCompileCache()).toBe(true);
    expect(requireWithCompileCache(file, cacheDir).fromCache).toBe(true);
  });

  it('compiles afresh when the file changed, and its new cache replaces the old one', () => {
    const { file, cacheDir } = fixture(source);
    requireWithCompileCache(file, cacheDir).saveCompileCache();
    const [old] = readdirSync(cacheDir);
    writeFileSync(file, source.replace('41 + 1', '40 + 3'));
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    const changed = requireWithCompileCache(file, cacheDir);
    expect(changed.fromCache).toBe(false);
    expect(changed.exports).toMatchObject({ answer: 43 });
    expect(changed.saveCompileCache()).toBe(true);
    const names = readdirSync(cacheDir);
    expect(names).toHaveLength(1);
    expect(names[0]).not.toBe(old);
  });

  it('treats a cache V8 does not accept as none, and runs the file all the same', () => {
    const { file, cacheDir } = fixture(source);
    requireWithCompileCache(file, cacheDir).saveCompileCache();
    const [name] = readdirSync(cacheDir);
    writeFileSync(join(cacheDir, name as string), 'not a code cache');
    const loaded = requireWithCompileCache(file, cacheDir);
    expect(loaded.fromCache).toBe(false);
    expect(loaded.exports).toMatchObject({ answer: 42 });
    expect(loaded.saveCompileCache()).toBe(true);
    expect(requireWithCompileCache(file, cacheDir).fromCache).toBe(true);
  });

  it('runs without a cache when none can be written, and saving says so without throwing', () => {
    const { file, cacheDir } = fixture(source);
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o500);
    const loaded = requireWithCompileCache(file, join(cacheDir, 'below'));
    expect(loaded.exports).toMatchObject({ answer: 42 });
    // root may write anywhere; then the cache is simply written.
    const saved = loaded.saveCompileCache();
    expect(saved).toBe(process.getuid?.() === 0);
    chmodSync(cacheDir, 0o700);
  });

  it('throws what the file throws, as require would', () => {
    const { file, cacheDir } = fixture("throw new Error('broken module');");
    expect(() => requireWithCompileCache(file, cacheDir)).toThrow('broken module');
  });
});
