import { describe, expect, it } from 'vitest';
import { announceExtensions, type ClientExtension, declaredExtensions, decorateTool } from './client-extension.js';

const ui: ClientExtension = {
  id: 'test.ui',
  specificationVersion: 'v1',
  extension: 'io.example/ui',
  settings: { mimeTypes: ['text/html'] },
  resources: [],
  toolMeta: (shows) => (shows === 'cells' ? { ui: { resourceUri: 'ui://x' } } : undefined),
  structuredContent: async () => undefined,
};

describe('client extensions', () => {
  it('are what the client declared in its extensions map, and nothing for a client that declared none', () => {
    expect(declaredExtensions([ui], { extensions: { 'io.example/ui': {} } })).toEqual([ui]);
    expect(declaredExtensions([ui], { extensions: { 'io.other/ui': {} } })).toEqual([]);
    expect(declaredExtensions([ui], {})).toEqual([]);
    expect(declaredExtensions([ui], undefined)).toEqual([]);
  });

  it('are announced with their settings beside the extensions already there; nothing declared leaves the capabilities as they are', () => {
    const capabilities = { tools: {}, extensions: { 'io.example/tasks': {} } };
    expect(announceExtensions(capabilities, [ui])).toEqual({
      tools: {},
      extensions: { 'io.example/tasks': {}, 'io.example/ui': { mimeTypes: ['text/html'] } },
    });
    expect(announceExtensions(capabilities, [])).toBe(capabilities);
  });

  it('decorate only the tools that show something, for a client that declared them; others stay the same object', () => {
    const tool = { name: 'get_cell', _meta: { 'nteract/idempotencyKey': 'honored' } };
    expect(decorateTool(tool, 'cells', [ui])).toEqual({
      name: 'get_cell',
      _meta: { 'nteract/idempotencyKey': 'honored', ui: { resourceUri: 'ui://x' } },
    });
    expect(decorateTool(tool, undefined, [ui])).toBe(tool);
    expect(decorateTool(tool, 'cells', [])).toBe(tool);
  });
});
