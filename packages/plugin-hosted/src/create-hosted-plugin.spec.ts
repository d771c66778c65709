import { inspect } from 'node:util';
import { type HostedUrlTarget, NotebookBackend, NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { HostedOptions } from './hosted-options.js';

describe(createHostedPlugin, () => {
  it('resolves hosted URLs, taking the token from JUPYTER_TOKEN when the URL has none', () => {
    const container = createTestContainer({
      plugins: [createHostedPlugin({ env: { JUPYTER_TOKEN: 'env-secret' } })],
    }).build();
    const target = container
      .get(NotebookTargetResolver)
      .resolve('http://127.0.0.1:8888/lab/tree/a.ipynb', { cwd: '/' }) as HostedUrlTarget;
    expect(target.url).toBe('http://127.0.0.1:8888/lab/tree/a.ipynb');
    expect(target.token?.reveal()).toBe('env-secret');
  });

  it('prefers the token in the URL, then the option, and never shows either in its bindings', () => {
    const container = createTestContainer({
      plugins: [createHostedPlugin({ token: 'opt-secret', env: { JUPYTER_TOKEN: 'env-secret' } })],
    }).build();
    const resolver = container.get(NotebookTargetResolver);
    const fromUrl = resolver.resolve('http://h:8888/notebooks/a.ipynb?token=url-secret', {
      cwd: '/',
    }) as HostedUrlTarget;
    const fromOption = resolver.resolve('http://h:8888/notebooks/a.ipynb', { cwd: '/' }) as HostedUrlTarget;
    expect(fromUrl.token?.reveal()).toBe('url-secret');
    expect(fromOption.token?.reveal()).toBe('opt-secret');
    const printed =
      inspect([container.get(HostedOptions), fromUrl, fromOption], { depth: 6 }) +
      JSON.stringify([fromUrl, fromOption]);
    expect(printed).not.toMatch(/secret/);
  });

  it('does not handle local targets on its own', () => {
    const resolver = createTestContainer({ plugins: [createHostedPlugin({ env: {} })] })
      .build()
      .get(NotebookTargetResolver);
    expect(resolver.supportedKinds()).toEqual(['hosted-url']);
    expect(() => resolver.resolve('a.ipynb', { cwd: '/' })).toThrowError(
      "No loaded plugin recognises this notebook target. This server opens 'hosted-url' targets.",
    );
  });
});

describe('the tsup build of @nteract-mcp/plugin-hosted', () => {
  it('resolves its @inject-ed notebook backend from the built output', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const container = createMcpContainer({ plugins: [built.createHostedPlugin({ token: 't0k', env: {} })] });
    const [backend] = container.getAll(NotebookBackend);
    if (!backend) throw new Error('no notebook backend contributed');
    expect(backend).toBeInstanceOf(built.HostedUrlNotebookBackend);
    expect((backend.parse('https://h/lab/tree/x.ipynb', { cwd: '/' }) as HostedUrlTarget).token?.reveal()).toBe('t0k');
  });
});
