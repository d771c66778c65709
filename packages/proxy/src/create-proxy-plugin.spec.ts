import { ChildProcessPort, childExitCodes } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { ChildExitClassifier } from './child-exit-classifier.js';
import { ChildSupervisor } from './child-supervisor.js';
import { createProxyPlugin } from './create-proxy-plugin.js';

describe(createProxyPlugin, () => {
  it("classifies the contract's upgrade-handoff exit as a handoff a spawn failure as fatal, exit 0 as a clean stop and anything else as a crash", () => {
    const classifier = createTestContainer({ plugins: [createProxyPlugin()] })
      .build()
      .get(ChildExitClassifier);
    expect(classifier.classify({ code: childExitCodes.upgradeHandoff, signal: null })).toBe('handoff');
    expect(classifier.classify({ code: 1, signal: null })).toBe('crash');
    expect(classifier.classify({ code: null, signal: 'SIGKILL' })).toBe('crash');
    expect(classifier.classify({ code: 0, signal: null })).toBe('clean-stop');
    expect(classifier.classify({ code: null, signal: null, spawnError: 'ENOENT' })).toBe('fatal');
  });
});

describe('the tsup build of @nteract-mcp/proxy', () => {
  it('resolves its @inject-ed classes from the built output (no decorator metadata)', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createPluginContainer } = await import('@nteract-mcp/core');
    const container = createPluginContainer({ plugins: [built.createProxyPlugin()] });
    expect(container.get(built.ChildSupervisor)).toBeInstanceOf(built.ChildSupervisor);
    expect(container.get(built.ChildExitClassifier).classify({ code: 75, signal: null })).toBe('handoff');
    expect(container.isBound(ChildProcessPort)).toBe(true);
    expect(ChildSupervisor).not.toBe(built.ChildSupervisor);
  });
});
