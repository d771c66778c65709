import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from './write-file-atomic.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('keeps the permission bits of an existing file (0600 stays 0600)', async () => {
    const path = join(dir, 'private.ipynb');
    writeFileSync(path, 'old');
    chmodSync(path, 0o600);
    await writeFileAtomic(path, 'new');
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(statSync(path).mode & 0o7777).toBe(0o600);
  });

  it('keeps a wider mode too (0664 is not narrowed to the default)', async () => {
    const path = join(dir, 'shared.ipynb');
    writeFileSync(path, 'old');
    chmodSync(path, 0o664);
    await writeFileAtomic(path, 'new', 0o600);
    expect(statSync(path).mode & 0o7777).toBe(0o664);
  });

  it('keeps owner and group of an existing file', async () => {
    const path = join(dir, 'owned.ipynb');
    writeFileSync(path, 'old');
    const before = statSync(path);
    await writeFileAtomic(path, 'new');
    const after = statSync(path);
    expect([after.uid, after.gid]).toEqual([before.uid, before.gid]);
  });

  it('gives a new file the requested mode and leaves no temp file behind', async () => {
    const path = join(dir, 'sub', 'fresh.json');
    await writeFileAtomic(path, '{}', 0o600);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'sub'))).toEqual(['fresh.json']);
  });
});
