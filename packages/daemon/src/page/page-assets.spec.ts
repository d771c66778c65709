import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultPageAssetsDir, PageAssets } from './page-assets.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'page-assets-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe(PageAssets, () => {
  it('finds dist/page/ of the @nteract-mcp/daemon package by its name', () => {
    const found = defaultPageAssetsDir();
    expect(found.endsWith(join('dist', 'page'))).toBe(true);
    const manifest = join(dirname(dirname(found)), 'package.json');
    expect(existsSync(manifest)).toBe(true);
    expect(JSON.parse(readFileSync(manifest, 'utf8')).name).toBe('@nteract-mcp/daemon');
  });

  it('serves the built client with its content types, its chunks too, read once together and kept', () => {
    writeFileSync(join(dir, 'live-page.js'), '// the page script');
    writeFileSync(join(dir, 'live-page.css'), 'body{}');
    writeFileSync(join(dir, 'live-page.js.LEGAL.txt'), 'MIT');
    writeFileSync(join(dir, 'katex-AB12CD34.js'), '// a chunk');
    writeFileSync(join(dir, 'notes.md'), 'not served');
    writeFileSync(join(dir, 'live-page.imports.json'), '["katex-AB12CD34.js","gone-EF56GH78.js","../x.js"]');
    const assets = new PageAssets(new RecordingLogger(), () => dir);
    expect(assets.read('live-page.js')).toEqual({
      kind: 'found',
      type: 'text/javascript',
      body: Buffer.from('// the page script'),
    });
    expect(assets.read('live-page.css')).toMatchObject({ kind: 'found', type: 'text/css' });
    expect(assets.read('live-page.js.LEGAL.txt')).toMatchObject({ kind: 'found', type: 'text/plain' });
    writeFileSync(join(dir, 'live-page.js'), 'changed');
    writeFileSync(join(dir, 'katex-EF56GH78.js'), '// a later build');
    expect(assets.read('live-page.js')).toMatchObject({ body: Buffer.from('// the page script') });
    // The chunks are read with the script (one build): a later build's chunk is not served.
    expect(assets.read('katex-AB12CD34.js')).toEqual({
      kind: 'found',
      type: 'text/javascript',
      body: Buffer.from('// a chunk'),
    });
    expect(assets.read('katex-EF56GH78.js')).toBeUndefined();
    expect(assets.read('notes.md')).toBeUndefined();
    expect(assets.read('live-page.imports.json')).toBeUndefined();
    // The chunks the script imports as it starts, for the page's HTML: only the build's own files.
    expect(assets.startImports()).toEqual(['katex-AB12CD34.js']);
    expect(assets.read('secrets.json')).toBeUndefined();
    expect(assets.read('../package.json')).toBeUndefined();
  });

  it('says what to do when the client is not built, and logs it once', () => {
    const logger = new RecordingLogger();
    const missing = join(dir, 'dist', 'page');
    const assets = new PageAssets(logger, () => missing);
    const first = assets.read('live-page.js');
    expect(first).toEqual({
      kind: 'missing',
      message: `The live page's client is not built: ${join(missing, 'live-page.js')} is missing (run npm run build).`,
    });
    expect(assets.read('live-page.css')).toMatchObject({ kind: 'missing' });
    expect(assets.startImports()).toEqual([]);
    expect(logger.find('is not built', 'error')).toHaveLength(1);
    // Built afterwards: served from then on.
    mkdirSync(missing, { recursive: true });
    writeFileSync(join(missing, 'live-page.js'), 'built');
    expect(assets.read('live-page.js')).toMatchObject({ kind: 'found', body: Buffer.from('built') });
  });
});
