import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';

const missingText =
  "Missing required parameter: provide either 'path' (file path) or 'notebook_id' (UUID from list_active_notebooks), not both.";
const ambiguousText = "Ambiguous parameters: provide either 'path' or 'notebook_id', not both.";
const noSessionText = 'No active notebook session. Call connect_notebook or create_notebook first.';

describe('session tools', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  describe('list_active_notebooks', () => {
    it("returns the daemon's rooms with snake_case fields, and says when the daemon is not running", async () => {
      harness = await startChildServerTestHarness();
      const opened = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      const rooms = JSON.parse(resultText(await harness.call('list_active_notebooks')));
      expect(rooms).toEqual([
        {
          notebook_id: opened.notebook_id,
          active_peers: 1,
          has_kernel: false,
          kernel_status: null,
          ephemeral: false,
          notebook_path: join(harness.cwd, 'a.ipynb'),
        },
      ]);
      harness.daemon?.stop();
      expect(await toolError(harness.call('list_active_notebooks'))).toBe(
        'Failed to list notebooks. Is the daemon running? Error: Daemon is not running',
      );
    });
  });

  describe('connect_notebook', () => {
    it('opens a path relative to the cwd and returns the projection at once, with a cell summary', async () => {
      harness = await startChildServerTestHarness();
      const first = await harness.callJson('connect_notebook', { path: 'a.ipynb', notebook_id: null });
      expect(first).toEqual({
        notebook_id: expect.any(String),
        path: join(harness.cwd, 'a.ipynb'),
        connected: true,
        readiness: { document: 'ready', runtime: 'ready' },
        projection: 'ready',
        cells: '(empty notebook: no cells)',
      });
      expect(harness.daemon?.calls).toContain(`openNotebook:${join(harness.cwd, 'a.ipynb')}`);

      // The same notebook again (absolute path): a fresh peer replaces the active one; nothing is parked.
      const again = await harness.callJson('connect_notebook', { path: join(harness.cwd, 'a.ipynb') });
      expect(again.notebook_id).toBe(first.notebook_id);
      expect(again).not.toHaveProperty('switched_from');
      expect(harness.slot.parked).toEqual([]);
    });

    it('does not wait for readiness: a pending notebook is returned as the retained projection; an edit waits for it', async () => {
      harness = await startChildServerTestHarness({
        daemon: { readiness: { document: 'pending', runtime: 'pending' } },
      });
      const connected = await harness.callJson('connect_notebook', { path: 'slow.ipynb' });
      expect(connected).toMatchObject({
        projection: 'retained',
        readiness: { document: 'pending', runtime: 'pending' },
      });
      // Reads work at once; an edit waits (bounded) for the document instead of failing.
      expect(await harness.callJson('get_all_cells', { format: 'json' })).toMatchObject({ cells: [] });
      const edit = harness.callJson('create_cell', { source: 'x' });
      const handle = harness.daemon?.handles[0] as FakeNotebookHandle;
      handle.setReadiness({ document: 'ready', runtime: 'ready' });
      expect((await edit).cell_id).toBe('cell-1');
    });

    it('attaches by notebook id (any case) and reports an unavailable notebook with the daemon message', async () => {
      harness = await startChildServerTestHarness();
      const id = '0b5e2a8c-1f1d-4c55-9a55-3c3f1a2b4c5d';
      harness.daemon?.addPersistedNotebook(id, '/srv/n/persisted.ipynb');
      const attached = await harness.callJson('connect_notebook', { notebook_id: id.toUpperCase() });
      expect(attached).toMatchObject({ notebook_id: id, connected: true, path: '/srv/n/persisted.ipynb' });
      expect(harness.daemon?.calls).toContain(`attachNotebook:${id}`);

      const gone = '11111111-2222-4333-8444-555555555555';
      expect(await toolError(harness.call('connect_notebook', { notebook_id: gone }))).toBe(
        `Failed to join notebook: Notebook ${gone} is not available in the daemon`,
      );
      expect(harness.slot.active?.handle.notebookId).toBe(id);
    });

    it('answers bad parameters with tool errors in the original texts, before touching the slot', async () => {
      harness = await startChildServerTestHarness();
      const active = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
      const session = harness.slot.active;
      const daemonCalls = harness.daemon?.calls.length;

      expect(await toolError(harness.call('connect_notebook', {}))).toBe(missingText);
      expect(await toolError(harness.call('connect_notebook', { path: null, notebook_id: null }))).toBe(missingText);
      expect(
        await toolError(
          harness.call('connect_notebook', { path: 'b.ipynb', notebook_id: '0b5e2a8c-1f1d-4c55-9a55-3c3f1a2b4c5d' }),
        ),
      ).toBe(ambiguousText);
      // The backend's refusal passes through as a tool error, as is (the local plugin's own texts
      // are pinned by its spec; these are the harness stand-ins').
      expect(await toolError(harness.call('connect_notebook', { notebook_id: 'analysis.ipynb' }))).toBe(
        "'analysis.ipynb' is not a UUID",
      );
      expect(await toolError(harness.call('connect_notebook', { path: 'notes.txt' }))).toBe(
        `'${join(harness.cwd, 'notes.txt')}' is not a notebook file: give the path of a .ipynb file.`,
      );
      // No loaded backend takes `url`: a clear tool error, and nothing touched either.
      expect(await toolError(harness.call('connect_notebook', { url: 'https://host/lab/tree/a.ipynb' }))).toBe(
        "This server cannot open notebooks by 'url': no loaded plugin handles them.",
      );
      expect(await toolError(harness.call('connect_notebook', { path: 42 }))).toMatch(
        /^Invalid arguments for connect_notebook: path: .*Correct them and call connect_notebook again/,
      );

      expect(harness.slot.active).toBe(session);
      expect(harness.slot.active?.handle.notebookId).toBe(active.notebook_id);
      expect(harness.slot.parked).toEqual([]);
      expect(harness.slot.lastDrop).toBeUndefined();
      expect(harness.daemon?.calls.length).toBe(daemonCalls);
    });

    it('reports a failed open with the path as given, and the previous session stays active', async () => {
      harness = await startChildServerTestHarness();
      const kept = await harness.callJson('connect_notebook', { path: 'keep.ipynb' });
      harness.daemon?.failConnects(1);
      expect(await toolError(harness.call('connect_notebook', { path: 'other.ipynb' }))).toBe(
        "Failed to open notebook 'other.ipynb': FakeDaemonPort: connection failed (injected)",
      );
      expect(harness.slot.active?.handle.notebookId).toBe(kept.notebook_id);
    });

    it('parks the previous notebook when switching and says switched_from; switching back reuses neither peer', async () => {
      harness = await startChildServerTestHarness();
      const a = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      const b = await harness.callJson('connect_notebook', { path: 'b.ipynb' });
      expect(b.switched_from).toBe(a.notebook_id);
      expect(harness.slot.parked.map((session) => session.handle.notebookId)).toEqual([a.notebook_id]);
      expect(harness.slot.lastDrop).toMatchObject({ reason: 'switched', notebookId: a.notebook_id });

      const back = await harness.callJson('connect_notebook', { notebook_id: String(a.notebook_id) });
      expect(back).toMatchObject({ notebook_id: a.notebook_id, switched_from: b.notebook_id });
      expect(harness.slot.parked.map((session) => session.handle.notebookId)).toEqual([b.notebook_id]);
      // The old parked peer of A was released after the fresh activation was installed.
      const handles = harness.daemon?.handles ?? [];
      expect(handles.map((handle) => handle.isClosed)).toEqual([true, false, false]);
    });
  });

  describe('create_notebook', () => {
    it('creates an ephemeral python notebook in the cwd by default, and switches from the active one', async () => {
      harness = await startChildServerTestHarness();
      const a = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      const created = await harness.callJson('create_notebook');
      expect(created).toEqual({
        notebook_id: expect.any(String),
        kernel: 'python3',
        runtime: 'python',
        ephemeral: true,
        working_dir: harness.cwd,
        interpreter: null,
        readiness: { document: 'ready', runtime: 'ready' },
        switched_from: a.notebook_id,
      });
      expect(harness.daemon?.calls).toContain('createNotebook:python');
      expect(harness.slot.active?.origin).toBe('create');
      expect((await harness.call('list_active_notebooks')).content).toBeDefined();
    });

    it('takes an installed kernel by name, string booleans and a working_dir, and refuses a missing directory', async () => {
      harness = await startChildServerTestHarness({
        daemon: {
          kernels: [
            { name: 'ir', displayName: 'R', language: 'R', location: '/usr/share/jupyter/kernels/ir', available: true },
          ],
          interpreter: '/usr/lib/R/bin/R',
        },
      });
      const created = await harness.callJson('create_notebook', {
        kernel: 'ir',
        ephemeral: 'false',
        working_dir: 'subdir',
      });
      expect(created).toMatchObject({
        kernel: 'ir',
        ephemeral: false,
        working_dir: join(harness.cwd, 'subdir'),
        interpreter: '/usr/lib/R/bin/R',
      });
      expect(created).not.toHaveProperty('runtime');
      expect(created).not.toHaveProperty('switched_from');
      expect(await toolError(harness.call('create_notebook', { working_dir: 'nowhere' }))).toBe(
        `working_dir '${join(harness.cwd, 'nowhere')}' is not an existing directory.`,
      );
      expect(await toolError(harness.call('create_notebook', { kernel: 'deno' }))).toBe(
        "Failed to create notebook: No Jupyter kernel named 'deno' is installed.",
      );
      expect(harness.daemon?.calls.filter((call) => call.startsWith('createNotebook'))).toEqual([
        'createNotebook:ir',
        'createNotebook:deno',
      ]);
    });

    it('advertises kernel and runtime without runtimes the daemon cannot run', async () => {
      harness = await startChildServerTestHarness();
      const tools = (await harness.client.listTools()).tools;
      const create = tools.find((tool) => tool.name === 'create_notebook');
      expect(JSON.stringify(create)).not.toMatch(/deno/i);
      expect(Object.keys(create?.inputSchema.properties ?? {})).toEqual([
        'kernel',
        'runtime',
        'working_dir',
        'ephemeral',
        'url',
      ]);
    });

    it('waits until the new notebook is ready', async () => {
      harness = await startChildServerTestHarness({
        daemon: { readiness: { document: 'pending', runtime: 'pending' } },
      });
      let settled = false;
      const creating = harness.callJson('create_notebook').finally(() => {
        settled = true;
      });
      await vi.waitFor(() => expect(harness.daemon?.handles).toHaveLength(1));
      await harness.client.ping();
      expect(settled).toBe(false);
      expect(harness.slot.active).toBeUndefined();
      harness.daemon?.handles[0]?.setReadiness({ document: 'ready', runtime: 'unavailable', reason: 'no kernelspec' });
      expect(await creating).toMatchObject({
        readiness: { document: 'ready', runtime: 'unavailable', reason: 'no kernelspec' },
      });
    });

    it('is an error when the kernel did not start, and the new ephemeral notebook is discarded, the previous one staying active', async () => {
      harness = await startChildServerTestHarness();
      const first = await harness.callJson('create_notebook');
      harness.daemon?.setNextReadiness({
        document: 'ready',
        runtime: 'failed',
        reason: 'kernel failed to start: it exited (exit code 3)',
      });
      expect(await toolError(harness.call('create_notebook'))).toBe(
        'Failed to create notebook: its kernel did not start (kernel failed to start: it exited (exit code 3)). The new notebook was closed; being ephemeral, it is not kept. Check the kernel with list_kernels, or pick another (kernel=…).',
      );
      expect(harness.daemon?.handles.at(-1)?.isClosed).toBe(true);
      expect(harness.slot.active?.handle.notebookId).toBe(first.notebook_id);
    });

    it('reports a failed create', async () => {
      harness = await startChildServerTestHarness();
      harness.daemon?.failConnects(1);
      expect(await toolError(harness.call('create_notebook'))).toBe(
        'Failed to create notebook: FakeDaemonPort: connection failed (injected)',
      );
    });
  });

  describe('save_notebook', () => {
    it('needs an active session', async () => {
      harness = await startChildServerTestHarness();
      expect(await toolError(harness.call('save_notebook', { path: 'x.ipynb' }))).toBe(noSessionText);
    });

    it('saves under a path resolved like connect paths and keeps the notebook id', async () => {
      harness = await startChildServerTestHarness();
      const created = await harness.callJson('create_notebook');
      expect(await harness.callJson('save_notebook', { path: 'saved.ipynb' })).toEqual({
        path: join(harness.cwd, 'saved.ipynb'),
        notebook_id: created.notebook_id,
      });
      expect(harness.slot.active?.handle.notebookPath).toBe(join(harness.cwd, 'saved.ipynb'));
      // Saved again without a path: to its own file.
      expect(await harness.callJson('save_notebook')).toEqual({
        path: join(harness.cwd, 'saved.ipynb'),
        notebook_id: created.notebook_id,
      });
    });

    it('says what to do for an untitled notebook without path, a path open elsewhere, or a non-notebook path', async () => {
      harness = await startChildServerTestHarness();
      const other = await harness.callJson('connect_notebook', { path: 'taken.ipynb' });
      await harness.callJson('create_notebook');
      expect(await toolError(harness.call('save_notebook'))).toBe(
        "No path specified. For notebooks created with create_notebook(), you must provide a path (e.g., save_notebook(path='/path/to/file.ipynb'))",
      );
      expect(await toolError(harness.call('save_notebook', { path: 'taken.ipynb' }))).toBe(
        `Cannot save: ${join(harness.cwd, 'taken.ipynb')} is already open in session ${other.notebook_id}. Close that session first, then retry.`,
      );
      expect(await toolError(harness.call('save_notebook', { path: 'taken.py' }))).toBe(
        `'${join(harness.cwd, 'taken.py')}' is not a notebook file: give the path of a .ipynb file.`,
      );
      harness.daemon?.stop();
      expect(await toolError(harness.call('save_notebook', { path: 'later.ipynb' }))).toMatch(
        /^Lost the connection to notebook /,
      );
    });

    it('words other failures as a failed save', async () => {
      harness = await startChildServerTestHarness();
      await harness.callJson('create_notebook');
      const handle = harness.daemon?.handles[0] as FakeNotebookHandle;
      vi.spyOn(handle, 'save').mockRejectedValueOnce(new Error('disk full'));
      expect(await toolError(harness.call('save_notebook', { path: 'x.ipynb' }))).toBe(
        'Failed to save notebook: disk full',
      );
    });
  });

  describe('disconnect_notebook', () => {
    it('releases the active session, a parked one by id, and says when there is nothing to release', async () => {
      harness = await startChildServerTestHarness();
      expect(await toolError(harness.call('disconnect_notebook'))).toBe(
        'No active session to disconnect. Pass notebook_id to disconnect a specific parked session.',
      );
      const a = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      const b = await harness.callJson('connect_notebook', { path: 'b.ipynb' });

      expect(resultText(await harness.call('disconnect_notebook', { notebook_id: a.notebook_id }))).toBe(
        `Disconnected parked session ${a.notebook_id}. Peer connection released; daemon eviction timer will start.`,
      );
      expect(harness.slot.parked).toEqual([]);
      expect(harness.daemon?.handles[0]?.isClosed).toBe(true);

      const unknown = '99999999-2222-4333-8444-555555555555';
      expect(await toolError(harness.call('disconnect_notebook', { notebook_id: unknown }))).toBe(
        `No active or parked session with notebook_id '${unknown}'. Use list_active_notebooks to see available sessions.`,
      );

      expect(resultText(await harness.call('disconnect_notebook', { notebook_id: null }))).toBe(
        `Disconnected active session ${b.notebook_id}. No active session now; use connect_notebook or create_notebook to start a new one.`,
      );
      expect(harness.slot.active).toBeUndefined();
      expect(harness.daemon?.handles[1]?.isClosed).toBe(true);
    });

    it('leaves the no-session texts of the original to the notebook tools, before any connect and after a disconnect', async () => {
      harness = await startChildServerTestHarness();
      expect(await toolError(harness.call('get_all_cells'))).toBe(noSessionText);
      const a = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      await harness.call('disconnect_notebook');
      expect(await toolError(harness.call('get_all_cells'))).toBe(
        `No active notebook session (you disconnected it with disconnect_notebook). Reconnect with: connect_notebook(notebook_id="${a.notebook_id}") — file: ${join(harness.cwd, 'a.ipynb')}`,
      );
      expect(await toolError(harness.call('execute_cell', { cell_id: 'cell-1' }))).toContain(
        'No active notebook session (you disconnected it with disconnect_notebook)',
      );
    });
  });

  describe('session_status', () => {
    it('shows the active and parked sessions, the last drop, the daemon and the peer label', async () => {
      harness = await startChildServerTestHarness({ daemon: { version: '3.1.4', pid: 777 } });
      const empty = await harness.callJson('session_status');
      expect(empty).toMatchObject({ active: null, parked: [], last_drop: null, evictions: [] });

      const a = await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      const b = await harness.callJson('create_notebook');
      const status = await harness.callJson('session_status');
      expect(status).toEqual({
        active: {
          notebook_id: b.notebook_id,
          path: null,
          target: b.notebook_id,
          origin: 'create',
          activation: 2,
          readiness: { document: 'ready', runtime: 'ready' },
          conditions: [],
          daemon_incarnation: { pid: 777, started_at: expect.any(String) },
          ephemeral: true,
          working_dir: harness.cwd,
          interpreter: null,
        },
        parked: [{ notebook_id: a.notebook_id, path: join(harness.cwd, 'a.ipynb') }],
        last_drop: {
          reason: 'switched',
          notebook_id: a.notebook_id,
          notebook_path: join(harness.cwd, 'a.ipynb'),
          rejoin_target: join(harness.cwd, 'a.ipynb'),
        },
        evictions: [],
        daemon: { live: true, version: '3.1.4', pid: 777, started_at: expect.any(String) },
        peer_label: 'Claude Code agent:claude-code:feedc0de',
        session_report: { target: b.notebook_id, notebookId: b.notebook_id },
      });

      await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      expect((await harness.callJson('session_status')).active).toMatchObject({
        path: join(harness.cwd, 'a.ipynb'),
        working_dir: harness.cwd,
        interpreter: null,
      });

      harness.daemon?.failIdentityQueries(1);
      expect((await harness.callJson('session_status')).daemon).toEqual({
        live: 'unknown',
        error: 'FakeDaemonPort: identity query failed (injected)',
      });
      harness.daemon?.stop();
      expect((await harness.callJson('session_status')).daemon).toEqual({
        live: false,
        reason: 'daemon is not running',
      });
    });
  });

  describe('list_kernels', () => {
    it('lists the kernels of the backend that creates notebooks, with why one cannot start', async () => {
      harness = await startChildServerTestHarness({
        daemon: {
          kernels: [
            { name: 'ir', displayName: 'R', language: 'R', location: '/k/ir', available: false, reason: 'R not found' },
            { name: 'python3', displayName: 'Python 3', language: 'python', location: undefined, available: true },
          ],
        },
      });
      expect(await harness.callJson('list_kernels')).toEqual({
        kernels: [
          { name: 'ir', display_name: 'R', language: 'R', available: false, reason: 'R not found', location: '/k/ir' },
          { name: 'python3', display_name: 'Python 3', language: 'python', available: true, location: null },
        ],
        default: 'python3',
        hint: "Create a notebook in one with create_notebook(kernel='<name>').",
      });
      expect(harness.slot.active).toBeUndefined();
    });

    it('says when no kernel can start, and when no plugin lists kernels', async () => {
      harness = await startChildServerTestHarness({ daemon: { kernels: [] } });
      expect(await harness.callJson('list_kernels')).toMatchObject({
        kernels: [],
        hint: expect.stringContaining('No kernel can start here'),
      });
      await harness.close();
      harness = await startChildServerTestHarness({ daemon: false });
      expect(await toolError(harness.call('list_kernels'))).toMatch(/^This server cannot list kernels/);
    });
  });
});
