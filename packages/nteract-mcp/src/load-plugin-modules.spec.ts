import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreError } from '@nteract-mcp/core';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPluginModules } from './load-plugin-modules.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory with the given ES modules (name → source). */
function modules(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-modules-'));
  dirs.push(dir);
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  return dir;
}

async function failure(promise: Promise<unknown>): Promise<CoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!CoreError.is(error, 'invalidContribution'))
    throw new Error(`expected invalidContribution, got ${String(error)}`);
  return error;
}

describe(loadPluginModules, () => {
  it('calls createPlugin of each module with the context, paths resolved against cwd', async () => {
    const cwd = modules({
      'one.mjs': "export function createPlugin(context) { return { id: 'acme.one', seen: context.env.ACME }; }",
      'two.mjs': "export async function createPlugin() { return { id: 'acme.two' }; }",
    });
    const plugins = await loadPluginModules(['./one.mjs', join(cwd, 'two.mjs')], { env: { ACME: 'yes' }, cwd });
    expect(plugins).toEqual([{ id: 'acme.one', seen: 'yes' }, { id: 'acme.two' }]);
  });

  it('names the module that is missing, has no createPlugin, or throws', async () => {
    const cwd = modules({
      'none.mjs': 'export const something = 1;',
      'throws.mjs': "export function createPlugin() { throw new Error('ACME_DIR is not set'); }",
    });
    expect((await failure(loadPluginModules(['./missing.mjs'], { env: {}, cwd }))).message).toMatch(
      /^cannot load the plugin module '\.\/missing\.mjs': /,
    );
    expect((await failure(loadPluginModules(['./none.mjs'], { env: {}, cwd }))).message).toBe(
      "the plugin module './none.mjs' has no createPlugin export (it must export createPlugin(context) returning the plugin)",
    );
    expect((await failure(loadPluginModules(['./throws.mjs'], { env: {}, cwd }))).message).toBe(
      "the plugin module './throws.mjs' failed to create its plugin: ACME_DIR is not set",
    );
  });
});
