import { inspect } from 'node:util';
import { type HostedUrlTarget, NotebookBackend, NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import {
  createHostedPlugin,
  parseHubServerOptions,
  parseHubStartTimeout,
  parseRetrySchedule,
} from './create-hosted-plugin.js';
import { HostedOptions } from './hosted-options.js';
import { hostedRetrySchedule } from './hosted-rejoin-retry.js';
import { parseHostedCreateLocation } from './parse-hosted-create-location.js';

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

describe(parseRetrySchedule, () => {
  it('reads initial_ms,max_ms,attempts and refuses anything else with the variable named', () => {
    expect(parseRetrySchedule(undefined)).toBeUndefined();
    expect(parseRetrySchedule(' 200, 1000 ,5')).toEqual({ initialMs: 200, maxMs: 1000, maxAttempts: 5 });
    for (const bad of ['1,2', '0,10,3', '10,5,3', 'a,b,c', '1,2,3,4']) {
      expect(() => parseRetrySchedule(bad)).toThrowError(
        /NTERACT_MCP_HOSTED_RETRY must be 'initial_ms,max_ms,attempts'/,
      );
    }
  });

  it('is the schedule the plugin uses when NTERACT_MCP_HOSTED_RETRY is set', () => {
    const options = createTestContainer({
      plugins: [createHostedPlugin({ env: { NTERACT_MCP_HOSTED_RETRY: '100,400,3' } })],
    })
      .build()
      .get(HostedOptions);
    expect(options.retrySchedule).toEqual({ initialMs: 100, maxMs: 400, maxAttempts: 3 });
    expect(
      createTestContainer({ plugins: [createHostedPlugin({ env: {} })] })
        .build()
        .get(HostedOptions).retrySchedule,
    ).toEqual(hostedRetrySchedule);
  });
});

describe(parseHubStartTimeout, () => {
  it('reads whole seconds as milliseconds and refuses anything else with the variable named', () => {
    expect(parseHubStartTimeout(undefined)).toBeUndefined();
    expect(parseHubStartTimeout(' 300 ')).toBe(300_000);
    for (const bad of ['0', '-5', '1.5', 'ten']) {
      expect(() => parseHubStartTimeout(bad)).toThrowError(/NTERACT_MCP_HUB_START_TIMEOUT_SECS must be a whole number/);
    }
    const options = createTestContainer({
      plugins: [createHostedPlugin({ env: { NTERACT_MCP_HUB_START_TIMEOUT_SECS: '45' } })],
    })
      .build()
      .get(HostedOptions);
    expect(options.hubStartTimeoutMs).toBe(45_000);
  });
});

describe(parseHubServerOptions, () => {
  it('reads a JSON object and refuses anything else without repeating it', () => {
    expect(parseHubServerOptions(undefined)).toBeUndefined();
    expect(parseHubServerOptions('{"profile":"gpu","image":"x"}')).toEqual({ profile: 'gpu', image: 'x' });
    for (const bad of ['[1]', '"gpu"', 'null', '{nope']) {
      expect(() => parseHubServerOptions(bad)).toThrowError(/NTERACT_MCP_HUB_SERVER_OPTIONS must be a JSON object/);
    }
    expect(
      createTestContainer({ plugins: [createHostedPlugin({ env: {} })] })
        .build()
        .get(HostedOptions).hubServerOptions,
    ).toBeUndefined();
  });
});

describe(parseHostedCreateLocation, () => {
  it('takes a directory, a new .ipynb path or the bare server URL; the token stays a secret', () => {
    expect(parseHostedCreateLocation('http://h:8888/user/ada/lab/tree/work?token=t', {})).toMatchObject({
      serverUrl: 'http://h:8888/user/ada/',
      directory: 'work',
      notebookPath: undefined,
    });
    const named = parseHostedCreateLocation('http://h:8888/tree/a%20b/new.ipynb', { defaultHostedToken: 'd' });
    expect(named).toMatchObject({ serverUrl: 'http://h:8888/', directory: 'a b', notebookPath: 'a b/new.ipynb' });
    expect(named.token?.reveal()).toBe('d');
    expect(parseHostedCreateLocation('http://h:8888', {})).toMatchObject({
      serverUrl: 'http://h:8888/',
      directory: '',
    });
    expect(() => parseHostedCreateLocation('http://h/lab/tree/..%2Fx?token=s3cret', {})).toThrowError(
      /does not name a directory/,
    );
    expect(JSON.stringify(parseHostedCreateLocation('http://h/lab/tree/?token=s3cret', {}))).not.toContain('s3cret');
  });

  it('reads a doc/tree link on a Hub under a path prefix as the user server’s directory', () => {
    expect(parseHostedCreateLocation('http://h/jhub/user/ada/doc/tree/work/new.ipynb', {})).toMatchObject({
      serverUrl: 'http://h/jhub/user/ada/',
      directory: 'work',
      notebookPath: 'work/new.ipynb',
    });
  });
});
