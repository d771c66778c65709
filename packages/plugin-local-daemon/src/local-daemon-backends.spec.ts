import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeNotebookTarget, NotebookTargetResolver, RejoinCoordinator } from '@nteract-mcp/core';
import { type ChildServerTestHarness, startChildServerTestHarness, toolError } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';

const uuid = '0b5e2a8c-1f1d-4c55-9a55-3c3f1a2b4c5d';

/** The child server's tools over this plugin's own backends (and a fake daemon in place of runtimed). */
describe('the local daemon backends in the child server', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  const start = () => startChildServerTestHarness({ fakeLocalBackends: false, plugins: [createLocalDaemonPlugin()] });

  it('connects a path (canonical, relative to the cwd) and a notebook id (any case) through openNotebook and attachNotebook', async () => {
    harness = await start();
    writeFileSync(join(harness.cwd, 'a.ipynb'), '{}');
    const byPath = await harness.callJson('connect_notebook', { path: 'subdir/../a.ipynb' });
    expect(byPath.path).toBe(join(harness.cwd, 'a.ipynb'));
    expect(harness.daemon?.calls).toContain(`openNotebook:${join(harness.cwd, 'a.ipynb')}`);
    harness.daemon?.addPersistedNotebook(uuid, '/srv/n/persisted.ipynb');
    const byId = await harness.callJson('connect_notebook', { notebook_id: uuid.toUpperCase() });
    expect(byId).toMatchObject({ notebook_id: uuid, switched_from: byPath.notebook_id });
    expect(harness.daemon?.calls).toContain(`attachNotebook:${uuid}`);
    expect(harness.slot.active?.target).toEqual({ kind: 'notebook-id', notebookId: uuid });
  });

  it('says in the connect and create answers where the person can watch, while the daemon serves its page', async () => {
    harness = await start();
    const before = await harness.callJson('connect_notebook', { path: 'quiet.ipynb' });
    expect(before.live_page).toBeUndefined();
    if (harness.daemon) harness.daemon.livePage = { url: 'http://127.0.0.1:7777/', launchUrl: undefined };
    const older = await harness.callJson('connect_notebook', { path: 'older.ipynb' });
    // A daemon too old for launch addresses: show_notebook could give nothing, so it is not named.
    expect(older.live_page).toBeUndefined();
    if (harness.daemon) {
      harness.daemon.livePage = {
        url: 'http://127.0.0.1:7777/',
        launchUrl: 'http://127.0.0.1:7777/#launch=secret-code',
      };
    }
    const connected = await harness.callJson('connect_notebook', { path: 'watched.ipynb' });
    const created = await harness.callJson('create_notebook', {});
    for (const answer of [connected, created]) {
      expect(answer.live_page).toContain('show_notebook');
      expect(JSON.stringify(answer)).not.toContain('secret-code');
    }
  });

  it('refuses bad targets with the original texts before touching the slot', async () => {
    harness = await start();
    const kept = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
    const calls = harness.daemon?.calls.length;
    expect(await toolError(harness.call('connect_notebook', { notebook_id: 'analysis.ipynb' }))).toBe(
      "Invalid notebook_id 'analysis.ipynb': must be a UUID (e.g. from list_active_notebooks). To open a file, use the 'path' parameter instead.",
    );
    expect(await toolError(harness.call('connect_notebook', { path: 'subdir' }))).toContain(
      `'${join(harness.cwd, 'subdir')}' is a directory.`,
    );
    expect(await toolError(harness.call('connect_notebook', { path: 'notes.txt' }))).toBe(
      `'${join(harness.cwd, 'notes.txt')}' is not a notebook file: give the path of a .ipynb file.`,
    );
    expect(await toolError(harness.call('save_notebook', { path: 'out.py' }))).toBe(
      `'${join(harness.cwd, 'out.py')}' is not a notebook file: give the path of a .ipynb file.`,
    );
    // Without the hosted plugin, `url` is not taken by any backend.
    expect(await toolError(harness.call('connect_notebook', { url: 'http://h:8888/lab/tree/a.ipynb' }))).toBe(
      "This server cannot open notebooks by 'url': no loaded plugin handles them.",
    );
    expect(harness.slot.active?.handle.notebookId).toBe(kept.notebook_id);
    expect(harness.slot.parked).toEqual([]);
    expect(harness.daemon?.calls.length).toBe(calls);
  });

  it('creates through the notebook id backend (the new notebook is named by its id) and lists the rooms', async () => {
    harness = await start();
    const created = await harness.callJson('create_notebook', { runtime: 'python' });
    expect(harness.slot.active?.target).toEqual({ kind: 'notebook-id', notebookId: created.notebook_id });
    const rooms = JSON.parse(((await harness.call('list_active_notebooks')).content[0] as { text: string }).text) as {
      notebook_id: string;
    }[];
    expect(rooms.map((room) => room.notebook_id)).toEqual([created.notebook_id]);
  });

  it('rejoins by saved path and by id through the backends (reopen), and resolves its own descriptions again', async () => {
    harness = await start();
    const file = join(harness.cwd, 'saved.ipynb');
    writeFileSync(file, '{}');
    const resolver = harness.container.get(NotebookTargetResolver);
    const coordinator = harness.container.get(RejoinCoordinator);
    const saved = resolver.resolve('saved.ipynb', { cwd: harness.cwd });
    expect(resolver.resolve(describeNotebookTarget(saved), { cwd: '/' })).toEqual(saved);
    const published = await coordinator.rejoin(saved, { peerLabel: 'test' });
    expect(published.kind).toBe('published');
    expect(harness.daemon?.calls).toContain(`openNotebook:${file}`);

    const gone = resolver.resolve('11111111-2222-4333-8444-555555555555', { cwd: '/' });
    expect(await coordinator.rejoin(gone, { peerLabel: 'test' })).toMatchObject({ kind: 'evicted' });
  });
});
