import {
  McpError,
  type ReadResourceResult,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ManualClock } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { restoredSubscriptionMetaKey } from '../../handoff/handoff-contract.js';
import { SessionRecoveryState } from '../../session/session-recovery-state.js';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
} from '../../testing/start-child-server-test-harness.js';
import { cellResourceUri, cellResourceUriTemplate, notebookResourceUri } from './notebook-resources.js';
import { resourceNoticeIntervalMs } from './resource-subscriptions.js';

/** The `initialize` era's resource-not-found code: the harness's server (no era gate) speaks the SDK's own dialect. */
const resourceNotFoundCode = -32002;

/**
 * The rejection of a call about `uri`, which must be the specification's resource-not-found error
 * (-32002, `data.uri`); its text without the client's prefix.
 */
async function resourceNotFound(call: Promise<unknown>, uri: string): Promise<string> {
  const error = await call.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error, got ${String(error)}`);
  expect(error.code).toBe(resourceNotFoundCode);
  expect(error.data).toEqual({ uri });
  return error.message.replace(`MCP error ${resourceNotFoundCode}: `, '');
}

/** A harness on a manual clock with one notebook (`cell-1` code, `cell-2` markdown), recording the notices it gets. */
async function withNotebook() {
  const clock = new ManualClock();
  const harness = await startChildServerTestHarness({ clock, daemon: { peers: true } });
  const updated: string[] = [];
  let listChanges = 0;
  harness.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
  });
  harness.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanges += 1;
  });
  const connected = await harness.callJson('connect_notebook', { path: 'shared.ipynb' });
  const notebookId = String(connected.notebook_id);
  await harness.callJson('create_cell', { source: 'x = 1' });
  await harness.callJson('create_cell', { source: '# Notes', cell_type: 'markdown' });
  const handle = harness.slot.active?.handle as FakeNotebookHandle;
  /** Every notice sent so far has arrived (a request is answered after them). */
  const delivered = async (): Promise<void> => {
    await harness.client.ping();
  };
  return {
    harness,
    clock,
    handle,
    notebookId,
    updated,
    listChanges: () => listChanges,
    delivered,
    cell: (cellId: string) => cellResourceUri(notebookId, cellId),
    notebook: notebookResourceUri(notebookId),
  };
}

function textOf(result: ReadResourceResult): string {
  const [content] = result.contents;
  return String(content && 'text' in content ? content.text : '');
}

describe('cells as resources, with subscriptions (legacy era)', () => {
  let harness: ChildServerTestHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('lists the active notebook and its cells, offers the cell template, and reads a cell as JSON naming its last editor', async () => {
    const t = await withNotebook();
    harness = t.harness;
    t.handle.editAsPeer('human:ada', 'cell-1', 'x = 2');

    const { resources } = await t.harness.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([t.notebook, t.cell('cell-1'), t.cell('cell-2')]);
    expect(resources[1]).toMatchObject({ mimeType: 'application/json', title: 'Cell 1: x = 2' });
    const { resourceTemplates } = await t.harness.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: cellResourceUriTemplate })]);
    expect(cellResourceUriTemplate).toBe('nteract://notebook/{notebook_id}/cells/{cell_id}');

    const read = await t.harness.client.readResource({ uri: t.cell('cell-1') });
    expect(read.contents[0]).toMatchObject({ uri: t.cell('cell-1'), mimeType: 'application/json' });
    expect(JSON.parse(textOf(read))).toEqual({
      id: 'cell-1',
      cell_type: 'code',
      source: 'x = 2',
      metadata: {},
      outputs: [],
      execution_count: null,
      edited_by: 'human:ada',
      version: expect.any(String),
    });
    expect(JSON.parse(textOf(await t.harness.client.readResource({ uri: t.cell('cell-2') })))).toEqual({
      id: 'cell-2',
      cell_type: 'markdown',
      source: '# Notes',
      metadata: {},
      edited_by: expect.stringMatching(/agent:/),
      version: expect.any(String),
    });
    const gone = t.cell('cell-9');
    expect(await resourceNotFound(t.harness.client.readResource({ uri: gone }), gone)).toBe(
      `Unknown resource: ${gone}`,
    );
  });

  it("tells a subscribed cell once of another peer's edit, and its notebook of any change; nothing unsubscribed", async () => {
    const t = await withNotebook();
    harness = t.harness;
    expect(t.harness.client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
    await t.harness.client.subscribeResource({ uri: t.cell('cell-1') });
    await t.harness.client.subscribeResource({ uri: t.notebook });
    await t.delivered();
    expect(t.updated).toEqual([]);

    t.handle.editAsPeer('human:ada', 'cell-1', 'x = 2');
    await t.delivered();
    expect(t.updated).toEqual([t.cell('cell-1'), t.notebook]);
    // What the notice announces is what a read gives.
    expect(JSON.parse(textOf(await t.harness.client.readResource({ uri: t.cell('cell-1') }))).source).toBe('x = 2');

    t.clock.advance(resourceNoticeIntervalMs);
    t.handle.editAsPeer('human:ada', 'cell-2', '# Other');
    const inserted = t.handle.insertAsPeer('human:ada', 'y = 3').id;
    t.clock.advance(resourceNoticeIntervalMs);
    await t.delivered();
    // cell-2 is not subscribed; the notebook is told of both changes, coalesced into the interval.
    expect(t.updated).toEqual([t.cell('cell-1'), t.notebook, t.notebook, t.notebook]);
    expect(inserted).toBe('cell-3');
  });

  it('tells the outputs of an execution, and a deleted cell, to its subscribers', async () => {
    const t = await withNotebook();
    harness = t.harness;
    await t.harness.client.subscribeResource({ uri: t.cell('cell-1') });
    await t.harness.callJson('execute_cell', { cell_id: 'cell-1' });
    await t.delivered();
    expect(t.updated).toEqual([t.cell('cell-1')]);
    const read = JSON.parse(textOf(await t.harness.client.readResource({ uri: t.cell('cell-1') })));
    expect(read.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: 'out: x = 1\n' }]);

    t.clock.advance(resourceNoticeIntervalMs);
    t.handle.deleteAsPeer('human:ada', 'cell-1');
    await t.delivered();
    expect(t.updated).toEqual([t.cell('cell-1'), t.cell('cell-1')]);
  });

  it('coalesces a burst: the first change at once, the last at the end of the interval, nothing more', async () => {
    const t = await withNotebook();
    harness = t.harness;
    await t.harness.client.subscribeResource({ uri: t.cell('cell-1') });
    for (let i = 0; i < 5; i++) t.handle.editAsPeer('human:ada', 'cell-1', `x = ${i}`);
    await t.delivered();
    expect(t.updated).toHaveLength(1);
    t.clock.advance(resourceNoticeIntervalMs - 1);
    await t.delivered();
    expect(t.updated).toHaveLength(1);
    t.clock.advance(1);
    await t.delivered();
    // The trailing notice: the last change (x = 4) is told.
    expect(t.updated).toHaveLength(2);
    t.clock.advance(resourceNoticeIntervalMs * 5);
    await t.delivered();
    expect(t.updated).toHaveLength(2);
  });

  it('stops telling an unsubscribed resource; unsubscribing again is fine, a foreign URI is refused', async () => {
    const t = await withNotebook();
    harness = t.harness;
    await t.harness.client.subscribeResource({ uri: t.cell('cell-1') });
    await t.harness.client.unsubscribeResource({ uri: t.cell('cell-1') });
    await t.harness.client.unsubscribeResource({ uri: t.cell('cell-1') });
    expect(
      await resourceNotFound(t.harness.client.unsubscribeResource({ uri: 'file:///x.ipynb' }), 'file:///x.ipynb'),
    ).toBe('Unknown resource: file:///x.ipynb');
    t.handle.editAsPeer('human:ada', 'cell-1', 'x = 2');
    t.clock.advance(resourceNoticeIntervalMs);
    await t.delivered();
    expect(t.updated).toEqual([]);
  });

  it('refuses -32002 (resource not found) a URI naming nothing open (other scheme, notebook or cell) and subscribes nothing', async () => {
    const t = await withNotebook();
    harness = t.harness;
    const unknown = [
      'file:///x.ipynb',
      notebookResourceUri('00000000-0000-4000-8000-000000000000'),
      cellResourceUri('00000000-0000-4000-8000-000000000000', 'cell-1'),
      t.cell('cell-9'),
    ];
    for (const uri of unknown) {
      expect(await resourceNotFound(t.harness.client.subscribeResource({ uri }), uri)).toBe(`Unknown resource: ${uri}`);
    }
    t.handle.editAsPeer('human:ada', 'cell-1', 'x = 2');
    t.handle.insertAsPeer('human:ada', 'cell-3 is not cell-9');
    t.clock.advance(resourceNoticeIntervalMs);
    await t.delivered();
    expect(t.updated).toEqual([]);
  });

  it("says list_changed when the active notebook's cells come or go (its cells are listed), not for an edit", async () => {
    const t = await withNotebook();
    harness = t.harness;
    // The notebook's own cells came an instant ago: let their (coalesced) notice go first.
    t.clock.advance(resourceNoticeIntervalMs * 2);
    await t.delivered();
    const before = t.listChanges();
    t.handle.editAsPeer('human:ada', 'cell-1', 'x = 2');
    await t.delivered();
    expect(t.listChanges()).toBe(before);
    t.handle.insertAsPeer('human:ada', 'y = 1');
    await t.delivered();
    expect(t.listChanges()).toBe(before + 1);
    t.clock.advance(resourceNoticeIntervalMs);
    t.handle.deleteAsPeer('human:ada', 'cell-2');
    await t.delivered();
    expect(t.listChanges()).toBe(before + 2);
  });

  it('keeps a subscription restored for a new child while its notebook is not open, and tells it once when it is', async () => {
    const clock = new ManualClock();
    harness = await startChildServerTestHarness({ clock });
    const h = harness;
    const updated: string[] = [];
    h.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
    const notebookId = '0b1e5a9c-2f4d-4c41-9e57-7d3f0a6b8c21';
    h.daemon?.addPersistedNotebook(notebookId);
    const restored = { _meta: { [restoredSubscriptionMetaKey]: true } };
    const notebook = notebookResourceUri(notebookId);
    const cell = cellResourceUri(notebookId, 'cell-1');
    // Without the mark, a notebook that is not open is unknown; with it, the subscription is kept.
    expect(await resourceNotFound(h.client.subscribeResource({ uri: notebook }), notebook)).toBe(
      `Unknown resource: ${notebook}`,
    );
    await h.client.subscribeResource({ uri: notebook, ...restored });
    await h.client.subscribeResource({ uri: cell, ...restored });
    // Still refused: what is not a URI of this server.
    expect(await resourceNotFound(h.client.subscribeResource({ uri: 'file:///x', ...restored }), 'file:///x')).toBe(
      'Unknown resource: file:///x',
    );
    await h.client.ping();
    expect(updated).toEqual([]);

    // The rejoin: what changed while no child watched is unknown, so each is told once.
    await h.callJson('connect_notebook', { notebook_id: notebookId });
    await h.client.ping();
    expect(updated.sort()).toEqual([cell, notebook].sort());
    await h.callJson('create_cell', { source: 'x = 1' });
    clock.advance(resourceNoticeIntervalMs);
    await h.client.ping();
    expect(updated.filter((uri) => uri === notebook)).toHaveLength(2);
  });

  it('judges a URI of a notebook being brought back (a restarted child rejoining it) once it is back, not before', async () => {
    harness = await startChildServerTestHarness();
    const h = harness;
    const notebookId = '0b1e5a9c-2f4d-4c41-9e57-7d3f0a6b8c21';
    h.daemon?.addPersistedNotebook(notebookId);
    const recovery = h.container.get(SessionRecoveryState);
    recovery.setRecovering({ kind: 'notebook-id', notebookId }, h.slot.intentEpoch);
    recovery.setAttempting(true);
    const uri = notebookResourceUri(notebookId);
    const subscribing = h.client.subscribeResource({ uri });
    const reading = h.client.readResource({ uri });
    await h.client.ping();
    await h.callJson('connect_notebook', { notebook_id: notebookId });
    await expect(subscribing).resolves.toEqual({});
    expect((await reading).contents[0]?.uri).toBe(uri);
  });

  it('tells a restored subscription at once when its notebook is already open', async () => {
    const t = await withNotebook();
    harness = t.harness;
    await t.harness.client.subscribeResource({
      uri: t.cell('cell-1'),
      _meta: { [restoredSubscriptionMetaKey]: true },
    });
    await t.delivered();
    expect(t.updated).toEqual([t.cell('cell-1')]);
  });
});
