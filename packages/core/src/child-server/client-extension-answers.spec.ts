import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientExtension } from '../contributions/client-extension.js';
import { definePlugin } from '../di/mcp-plugin.js';
import { plainToolListMetaKey } from '../handoff/handoff-contract.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
} from '../testing/start-child-server-test-harness.js';

const viewExtension: ClientExtension = {
  id: 'test.view',
  specificationVersion: 'v1',
  extension: 'io.example/view',
  settings: {},
  resources: [
    {
      uri: 'ui://test/view.html',
      name: 'view',
      mimeType: 'text/html',
      read: () => ({ text: '<p>hi</p>', meta: { a: 1 } }),
    },
  ],
  toolMeta: (shows) => ({ 'test/view': shows }),
  structuredContent: async (call) => ({ shows: call.shows, notebook: call.handle?.notebookId ?? null }),
};

const plugin = definePlugin({
  id: 'test.view',
  module: new ContainerModule(({ bind }) => {
    bind(ClientExtension).toConstantValue(viewExtension);
  }),
});

let harness: ChildServerTestHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const metaOf = (tools: readonly Tool[], name: string) => tools.find((tool) => tool.name === name)?._meta ?? {};

describe('a client extension in the child server', () => {
  it('decorates the tools that show cells, lists and reads its resources and structures their results, for a client that declared it', async () => {
    harness = await startChildServerTestHarness({
      plugins: [plugin],
      clientCapabilities: { extensions: { 'io.example/view': {} } } as Record<string, object>,
    });
    const { tools } = await harness.client.listTools();
    expect(metaOf(tools, 'get_cell')).toMatchObject({ 'test/view': 'cells' });
    expect(metaOf(tools, 'list_kernels')).not.toHaveProperty('test/view');
    // The proxy's own list is the plain one, whatever the client declared.
    const plain = await harness.client.request(
      { method: 'tools/list', params: { _meta: { [plainToolListMetaKey]: true } } },
      ListToolsResultSchema,
    );
    expect(metaOf(plain.tools, 'get_cell')).not.toHaveProperty('test/view');
    expect((await harness.client.listResources()).resources).toContainEqual({
      uri: 'ui://test/view.html',
      name: 'view',
      mimeType: 'text/html',
    });
    expect(await harness.client.readResource({ uri: 'ui://test/view.html' })).toMatchObject({
      contents: [{ uri: 'ui://test/view.html', mimeType: 'text/html', text: '<p>hi</p>', _meta: { a: 1 } }],
    });
    const handle = await harness.createNotebook();
    const created = await harness.call('create_cell', { source: '1' });
    expect(created.structuredContent).toEqual({ shows: 'cells', notebook: handle.notebookId });
    expect((await harness.call('list_kernels')).structuredContent).toBeUndefined();
  });

  it('changes nothing for a client that did not declare it', async () => {
    harness = await startChildServerTestHarness({ plugins: [plugin] });
    const { tools } = await harness.client.listTools();
    expect(metaOf(tools, 'get_cell')).not.toHaveProperty('test/view');
    expect((await harness.client.listResources()).resources.map((resource) => resource.uri)).not.toContain(
      'ui://test/view.html',
    );
    await expect(harness.client.readResource({ uri: 'ui://test/view.html' })).rejects.toThrow(/Unknown resource/);
    await harness.createNotebook();
    expect((await harness.call('create_cell', { source: '1' })).structuredContent).toBeUndefined();
  });
});
