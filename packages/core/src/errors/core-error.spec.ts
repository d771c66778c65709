import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CoreError } from './core-error.js';

const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** Loads the built package from a separate directory: a second copy, as a bundling plugin would have. */
async function loadSecondCopy(): Promise<typeof import('../index.js')> {
  // Inside the package, so its bare imports resolve through the workspace's node_modules.
  const dir = mkdtempSync(join(import.meta.dirname, '..', '..', '.second-copy-'));
  copies.push(dir);
  cpSync(join(import.meta.dirname, '..', '..', 'dist'), dir, { recursive: true });
  return import(/* @vite-ignore */ pathToFileURL(join(dir, 'index.js')).href);
}

describe(CoreError, () => {
  it('is recognised by kind', () => {
    const error = new CoreError('notebookUnavailable', 'gone');
    expect(CoreError.is(error)).toBe(true);
    expect(CoreError.is(error, 'notebookUnavailable')).toBe(true);
    expect(CoreError.is(error, 'daemonUnavailable')).toBe(false);
    expect(error.name).toBe('CoreError');
  });

  it('rejects look-alikes that lack the brand', () => {
    expect(CoreError.is({ kind: 'notebookUnavailable', message: 'x' })).toBe(false);
    expect(CoreError.is(new Error('x'))).toBe(false);
    expect(CoreError.is(null)).toBe(false);
    expect(CoreError.is('CoreError')).toBe(false);
  });

  it('recognises an error from another copy of the package, where instanceof fails', async () => {
    const other = await loadSecondCopy();
    expect(other.CoreError).not.toBe(CoreError);
    const foreign = new other.CoreError('daemonQueryFailed', 'from the other copy');
    expect(foreign instanceof CoreError).toBe(false);
    expect(CoreError.is(foreign, 'daemonQueryFailed')).toBe(true);
    expect(other.CoreError.is(new CoreError('invalidTarget', 'x'), 'invalidTarget')).toBe(true);
    expect(other.CoreError.is(new CoreError('invalidTarget', 'x'), 'cellNotFound')).toBe(false);
  });
});
