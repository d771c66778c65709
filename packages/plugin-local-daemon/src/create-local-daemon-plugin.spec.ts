import { CoreError, NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { RuntimedSocketLocator } from './runtimed-socket-locator.js';

const uuid = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';

describe(createLocalDaemonPlugin, () => {
  it('makes local paths and notebook ids resolvable, but not hosted URLs', () => {
    const resolver = createTestContainer({ plugins: [createLocalDaemonPlugin()] })
      .build()
      .get(NotebookTargetResolver);
    expect(resolver.supportedKinds()).toEqual(['local-path', 'notebook-id']);
    expect(resolver.resolve(uuid.toUpperCase(), { cwd: '/' })).toEqual({ kind: 'notebook-id', notebookId: uuid });
    expect(resolver.resolveAs('local-path', 'a.ipynb', { cwd: '/work' })).toMatchObject({
      kind: 'local-path',
      existed: false,
    });
    let caught: unknown;
    try {
      resolver.resolve('http://localhost:8888/lab/tree/a.ipynb', { cwd: '/' });
    } catch (error) {
      caught = error;
    }
    expect(CoreError.is(caught, 'unsupportedTarget')).toBe(true);
    expect((caught as Error).message).toBe(
      "Unsupported notebook target scheme 'http:': no loaded plugin handles it. This server opens 'local-path', 'notebook-id' targets.",
    );
  });

  it('locates the socket from options, else from the environment it was given', () => {
    const configured = createTestContainer({
      plugins: [createLocalDaemonPlugin({ socketPath: '/tmp/d.sock' })],
    }).build();
    expect(configured.get(RuntimedSocketLocator).socketPath()).toBe('/tmp/d.sock');
    const discovered = createTestContainer({
      plugins: [createLocalDaemonPlugin({ env: { XDG_RUNTIME_DIR: '/run/user/7' } })],
    }).build();
    expect(discovered.get(RuntimedSocketLocator).socketPath()).toBe('/run/user/7/runt/runtimed.sock');
  });
});

describe('the tsup build of @nteract-mcp/plugin-local-daemon', () => {
  it('resolves its @inject-ed classes from the built output (no decorator metadata)', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const container = createMcpContainer({
      plugins: [built.createLocalDaemonPlugin({ env: { RUNTIMED_SOCKET_PATH: '/x/r.sock' } })],
    });
    expect(container.get(built.RuntimedSocketLocator).socketPath()).toBe('/x/r.sock');
    expect(container.get(NotebookTargetResolver).supportedKinds()).toEqual(['local-path', 'notebook-id']);
  });
});
