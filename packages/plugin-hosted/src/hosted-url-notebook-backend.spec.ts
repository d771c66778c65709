import { KeptCredentials } from '@nteract-mcp/core';
import { type ChildServerTestHarness, startChildServerTestHarness, toolError } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { hostedNotebookId } from './hosted-notebook-id.js';
import { FakeJupyterServer } from './testing/fake-jupyter-server.js';

const base = 'http://127.0.0.1:8888/';
const notebook = { cells: [], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 };

/** `connect_notebook(url=…)`, `create_notebook(url=…)`, `list_active_notebooks` and `session_status` with this plugin's backend. */
describe('the hosted notebook backend in the child server', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function start(options: { daemon?: boolean; env?: Record<string, string> } = {}) {
    const server = new FakeJupyterServer('s3cret');
    server.writeFile('a.ipynb', notebook);
    harness = await startChildServerTestHarness({
      ...(options.daemon === false ? { daemon: false } : {}),
      plugins: [createHostedPlugin({ env: options.env ?? {}, connector: server })],
    });
    return server;
  }

  it('connects by URL with the token from the URL; the token appears in no result, status or log', async () => {
    await start();
    const connected = await harness.callJson('connect_notebook', { url: `${base}notebooks/a.ipynb?token=s3cret` });
    expect(connected).toMatchObject({
      notebook_id: hostedNotebookId(`${base}lab/tree/a.ipynb`),
      path: `${base}lab/tree/a.ipynb`,
      connected: true,
      readiness: { document: 'ready', runtime: 'ready' },
    });
    const created = await harness.callJson('create_cell', { source: 'x = 41', and_run: true });
    const listed = await harness.call('list_active_notebooks');
    const status = await harness.callJson('session_status');
    expect(status.active).toMatchObject({ target: `${base}lab/tree/a.ipynb`, daemon_incarnation: null });
    expect((status.session_report as { target: string }).target).toBe(`${base}lab/tree/a.ipynb`);
    const rooms = JSON.parse((listed.content[0] as { text: string }).text) as Record<string, unknown>[];
    expect(rooms).toEqual([expect.objectContaining({ notebook_path: `${base}lab/tree/a.ipynb`, has_kernel: true })]);
    const everything = JSON.stringify([connected, created, listed, status, harness.logger.records]);
    expect(everything).not.toContain('s3cret');
  });

  it('keeps the token that opened a notebook for its server: a URL without one (a restart’s handoff) uses it', async () => {
    await start();
    const wrong = await harness.call('connect_notebook', { url: `${base}lab/tree/a.ipynb?token=wrong` });
    expect(wrong.isError).toBe(true);
    const credentials = harness.container.get(KeptCredentials);
    expect(credentials.find(base)).toBeUndefined();
    await harness.callJson('connect_notebook', { url: `${base}lab/tree/a.ipynb?token=s3cret` });
    expect(credentials.list()).toEqual([{ scope: base, token: 's3cret' }]);
    await harness.call('disconnect_notebook');
    const again = await harness.callJson('connect_notebook', { url: `${base}lab/tree/a.ipynb` });
    expect(again).toMatchObject({ connected: true, readiness: { runtime: 'ready' } });
  });

  it('answers a keyed call replayed into a new handle of the notebook with the first one: applied once', async () => {
    const server = await start();
    const url = `${base}lab/tree/a.ipynb?token=s3cret`;
    await harness.callJson('connect_notebook', { url });
    const first = await harness.callJson('create_cell', { source: 'once = 1' }, 'key-once');
    // The session's handle goes away (as after a culled kernel) and the notebook is opened again.
    await harness.call('disconnect_notebook');
    await harness.callJson('connect_notebook', { url });
    const replayed = await harness.callJson('create_cell', { source: 'once = 1' }, 'key-once');
    expect(replayed.cell_id).toBe(first.cell_id);
    const saved = server.files.get('a.ipynb')?.content as { cells: { source: string | string[] }[] };
    expect(saved.cells.map((cell) => [cell.source].flat().join(''))).toEqual(['once = 1']);
  });

  it('run_code runs scratch code in the hosted notebook’s kernel and answers its outputs; no cell is added', async () => {
    const server = await start();
    await harness.callJson('connect_notebook', { url: `${base}lab/tree/a.ipynb?token=s3cret` });
    await harness.callJson('create_cell', { source: 'x = 41', and_run: true });
    const ran = await harness.callJson('run_code', { code: 'print(x + 1)' });
    expect(ran).toMatchObject({ notebook_id: hostedNotebookId(`${base}lab/tree/a.ipynb`), status: 'ok' });
    expect(JSON.stringify(ran.outputs)).toContain('42');
    expect(server.executed.at(-1)).toEqual({ code: 'print(x + 1)', storeHistory: false });
    expect(server.file('a.ipynb')?.cells.map((cell) => cell.source)).toEqual(['x = 41']);
  });

  it('lists hosted notebooks next to the daemon’s rooms', async () => {
    await start({ env: { JUPYTER_TOKEN: 's3cret' } });
    const local = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
    await harness.callJson('connect_notebook', { url: `${base}lab/tree/a.ipynb` });
    const rooms = JSON.parse(
      ((await harness.call('list_active_notebooks')).content[0] as { text: string }).text,
    ) as Record<string, unknown>[];
    expect(rooms.map((room) => room.notebook_id)).toEqual([
      local.notebook_id,
      hostedNotebookId(`${base}lab/tree/a.ipynb`),
    ]);
  });

  it('creates on a server: a new untitled notebook in a directory, or a given new .ipynb path', async () => {
    const server = await start({ env: { JUPYTER_TOKEN: 's3cret' } });
    const untitled = await harness.callJson('create_notebook', { url: `${base}lab/tree/` });
    expect(untitled).toMatchObject({ url: `${base}lab/tree/Untitled.ipynb`, ephemeral: false });
    expect(server.file('Untitled.ipynb')?.metadata).toEqual({
      kernelspec: { name: 'python3', display_name: 'python3' },
    });
    const named = await harness.callJson('create_notebook', { url: `${base}lab/tree/sub/new.ipynb`, runtime: 'ir' });
    expect(named).toMatchObject({ url: `${base}lab/tree/sub/new.ipynb` });
    expect(server.sessions.get('sub/new.ipynb')?.kernel.name).toBe('ir');
    expect(harness.slot.active?.handle.notebookPath).toBe(`${base}lab/tree/sub/new.ipynb`);
    expect(await toolError(harness.call('create_notebook', { url: `${base}lab/tree/a.ipynb` }))).toBe(
      `Failed to create notebook: ${base}lab/tree/a.ipynb already exists on the Jupyter Server: open it with connect_notebook(url=…), or give a new name.`,
    );
  });

  it('alone (no local daemon), create without url says to give one', async () => {
    await start({ daemon: false });
    expect(await toolError(harness.call('create_notebook'))).toBe(
      'Creating a notebook on a Jupyter Server needs its url: create_notebook(url="http(s)://host[:port]/lab/tree/<directory>") or …/<new>.ipynb.',
    );
  });

  it('a refused token and a missing notebook are clear tool errors that leave the slot alone and show no token', async () => {
    await start({ env: { JUPYTER_TOKEN: 'wrong-token' } });
    const kept = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
    const refused = await toolError(harness.call('connect_notebook', { url: `${base}lab/tree/a.ipynb` }));
    expect(refused).toMatch(/refused the credentials/);
    const missing = await toolError(
      harness.call('connect_notebook', { url: `${base}lab/tree/missing.ipynb?token=s3cret` }),
    );
    expect(missing).toBe(
      `Failed to join notebook: The Jupyter Server at ${base} has no notebook missing.ipynb (${base}lab/tree/missing.ipynb). Create it with create_notebook(url=…) or check the path.`,
    );
    expect(harness.slot.active?.handle.notebookId).toBe(kept.notebook_id);
    expect(JSON.stringify([refused, missing, harness.logger.records])).not.toMatch(/s3cret|wrong-token/);
  });

  it('refuses a URL that names no notebook with its own text, as a tool error', async () => {
    await start();
    expect(await toolError(harness.call('connect_notebook', { url: 'https://host/files/a.ipynb?token=s3cret' }))).toBe(
      'Hosted URL https://host/files/a.ipynb does not name a notebook. Expected http(s)://host[:port][/base]/lab/tree/<path>.ipynb (or /doc/tree/…, /notebooks/…, /tree/…).',
    );
  });
});
