import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, type JSONRPCMessage, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { readSessionReport, sessionReportMetaKey } from '../handoff/session-report.js';
import { Logger } from '../ports/logger.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
  testAgentSession,
  testClientInfo,
} from '../testing/start-child-server-test-harness.js';
import { createChildMcpServer } from './create-child-mcp-server.js';

const allTools = [
  'list_active_notebooks',
  'connect_notebook',
  'create_notebook',
  'save_notebook',
  'disconnect_notebook',
  'session_status',
  'list_kernels',
  'get_cell',
  'get_all_cells',
  'create_cell',
  'set_cell',
  'delete_cell',
  'move_cell',
  'execute_cell',
  'run_all_cells',
  'get_results',
  'interrupt_kernel',
  'restart_kernel',
  'replace_in_cell',
  'clear_outputs',
  'run_code',
  'get_changes',
  'undo',
  'add_comment',
  'reply_comment',
  'resolve_comment',
  'reopen_comment',
  'list_comments',
  'restore_state',
  'list_variables',
  'inspect_variable',
  'list_packages',
  'install_packages',
  'search_notebook',
];

/** The rejection of a call, which must be a JSON-RPC invalid-params error. */
async function invalidParams(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
  return (error as McpError).message;
}

describe('createChildMcpServer', () => {
  let harness: ChildServerTestHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('lists every tool with a JSON schema of its parameters and its annotations', async () => {
    harness = await startChildServerTestHarness();
    const { tools } = await harness.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(allTools);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description?.length).toBeGreaterThan(20);
      expect(Object.keys(tool.annotations ?? {}).sort()).toEqual([
        'destructiveHint',
        'idempotentHint',
        'openWorldHint',
        'readOnlyHint',
      ]);
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName.get('connect_notebook')?.inputSchema.properties ?? {})).toEqual([
      'path',
      'notebook_id',
      'url',
    ]);
    expect(byName.get('connect_notebook')?.inputSchema.properties?.path).toMatchObject({ type: ['string', 'null'] });
    expect(byName.get('get_cell')?.inputSchema.required).toEqual(['cell_id']);
    expect(byName.get('create_cell')?.inputSchema.properties?.and_run).toMatchObject({ type: ['boolean', 'null'] });
    expect(byName.get('list_active_notebooks')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('list_active_notebooks')?._meta).toEqual({ 'anthropic/alwaysLoad': true });
    expect(byName.get('connect_notebook')?.annotations).toMatchObject({ idempotentHint: true, openWorldHint: true });
    expect(byName.get('disconnect_notebook')?.annotations).toMatchObject({ destructiveHint: true });
    // The proxy resends an unanswered call only if it is safe: execution must not claim to be.
    for (const name of ['execute_cell', 'run_all_cells', 'create_cell', 'create_notebook', 'restart_kernel']) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    }
    for (const name of ['get_cell', 'get_all_cells', 'get_results', 'session_status']) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true });
    }
  });

  it('names itself nteract, with the daemon version in the title only when it is known', async () => {
    harness = await startChildServerTestHarness({ server: { version: '1.2.3', daemonVersion: '2.0.1' } });
    expect(harness.client.getServerVersion()).toEqual({
      name: 'nteract',
      version: '1.2.3',
      title: 'nteract (daemon 2.0.1)',
    });
    expect(harness.client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { listChanged: true },
    });
    expect(harness.client.getInstructions()).toContain('Each connection has one active notebook session');
    await harness.close();

    harness = await startChildServerTestHarness({ server: { version: '1.2.3' } });
    expect(harness.client.getServerVersion()).toEqual({ name: 'nteract', version: '1.2.3' });
  });

  it('answers an unknown tool with JSON-RPC invalid params, exact text on the wire', async () => {
    harness = await startChildServerTestHarness();
    // The client prefixes `MCP error <code>: ` once; a second prefix would mean the server sent one.
    expect(await invalidParams(harness.call('no_such_tool'))).toBe('MCP error -32602: Unknown tool: no_such_tool');
    // (A tools/call whose `arguments` is not an object is refused as -32602 before the SDK sees it:
    // guarded-stdio-transport.spec.ts.)
  });

  it('answers arguments its input schema refuses with a tool result (isError, SEP-1303) saying what to fix', async () => {
    harness = await startChildServerTestHarness();
    const fix = (tool: string) => `Correct them and call ${tool} again`;
    const missing = await harness.call('get_cell', {});
    expect(missing.isError).toBe(true);
    expect(resultText(missing)).toMatch(/^Invalid arguments for get_cell: cell_id: /);
    expect(resultText(missing)).toContain(fix('get_cell'));
    // Like every tool result, it carries the session report.
    expect(readSessionReport(missing)).toBeDefined();
    const format = await harness.call('get_all_cells', { format: 'xml' });
    expect(format.isError).toBe(true);
    expect(resultText(format)).toMatch(/^Invalid arguments for get_all_cells: format: .*summary.*json.*rich/);
    expect(resultText(format)).toContain(fix('get_all_cells'));
    const index = await harness.call('create_cell', { index: -1 });
    expect(index.isError).toBe(true);
    expect(resultText(index)).toMatch(/^Invalid arguments for create_cell: index: /);
  });

  it('logs one debug line per tool call with its tool, id, duration and outcome, never its arguments or result', async () => {
    harness = await startChildServerTestHarness();
    await harness.callJson('create_notebook');
    await harness.call('create_cell', { source: 'api_key = "do-not-log-me"' });
    await harness.call('get_cell', { cell_id: 'no-such-cell' });
    await harness.call('no_such_tool', { password: 'hunter2' }).catch(() => undefined);
    const calls = harness.logger.find('tools/call', 'debug').map((record) => record.fields);
    expect(calls).toEqual([
      { tool: 'create_notebook', id: expect.any(Number), ms: expect.any(Number), outcome: 'ok' },
      { tool: 'create_cell', id: expect.any(Number), ms: expect.any(Number), outcome: 'ok' },
      { tool: 'get_cell', id: expect.any(Number), ms: expect.any(Number), outcome: 'isError' },
      { tool: 'no_such_tool', id: expect.any(Number), ms: expect.any(Number), outcome: 'error', code: -32602 },
    ]);
    expect(new Set(calls.map((fields) => fields?.id)).size).toBe(4);
    const log = harness.logger.dump();
    expect(log).not.toContain('do-not-log-me');
    expect(log).not.toContain('hunter2');
  });

  it('labels its peer with the client title and an agent:<slug>:<session> suffix', async () => {
    harness = await startChildServerTestHarness();
    const label = `Claude Code agent:claude-code:${testAgentSession}`;
    expect(harness.child.peerLabel()).toBe(label);
    await harness.callJson('connect_notebook', { path: 'a.ipynb' });
    await harness.callJson('create_notebook');
    expect(harness.daemon?.peerLabels).toEqual([label, label]);
    expect(harness.daemon?.handles.map((handle) => handle.peerLabel)).toEqual([label, label]);
    expect(JSON.parse(resultText(await harness.call('session_status'))).peer_label).toBe(label);
  });

  it('uses Inkwell before the client has named itself, and a random 8-hex session when none is given', async () => {
    const container = createTestContainer().override(Logger, new RecordingLogger()).build();
    const child = createChildMcpServer(container, { version: '1', cwd: '/' });
    expect(child.peerLabel()).toMatch(/^Inkwell agent:agent:[0-9a-f]{8}$/);
    await child.close();
  });

  it("tells the agent, once, with its next answer, what the notebook's owner reports, and keeps lasting conditions in session_status", async () => {
    harness = await startChildServerTestHarness();
    const h = harness;
    const handle = await h.createNotebook();
    const news = (result: { content: unknown[] }) =>
      (result.content as { type: string; text?: string }[])
        .map((item) => item.text ?? '')
        .filter((text) => text.startsWith('[nteract] '));
    expect(news(await h.call('get_all_cells'))).toEqual([]);
    handle.conditions = [{ kind: 'autosave_failing', message: 'Saving /n/a.ipynb failed (ENOSPC).' }];
    handle.notices.push('The file was reloaded.');
    expect(news(await h.call('get_all_cells'))).toEqual([
      '[nteract] Saving /n/a.ipynb failed (ENOSPC).',
      '[nteract] The file was reloaded.',
    ]);
    // Said once; status keeps it while it lasts.
    expect(news(await h.call('get_all_cells'))).toEqual([]);
    const status = await h.callJson('session_status');
    expect((status.active as { conditions: unknown }).conditions).toEqual(handle.conditions);
    // A changed message is news again; a tool error gets the news too.
    handle.conditions = [{ kind: 'autosave_failing', message: 'Saving /n/a.ipynb failed (EACCES).' }];
    const failed = await h.call('get_cell', { cell_id: 'nope' });
    expect(failed.isError).toBe(true);
    expect(news(failed)).toEqual(['[nteract] Saving /n/a.ipynb failed (EACCES).']);
  });

  it('says clearly that local notebooks are unavailable when no daemon port is bound', async () => {
    harness = await startChildServerTestHarness({ daemon: false });
    const listed = await harness.call('list_active_notebooks');
    expect(listed.isError).toBe(true);
    expect(resultText(listed)).toContain('no local daemon');
    const connected = await harness.call('connect_notebook', { path: 'a.ipynb' });
    expect(connected.isError).toBe(true);
    expect(resultText(connected)).toBe("This server cannot open notebooks by 'path': no loaded plugin handles them.");
    const created = await harness.call('create_notebook');
    expect(created.isError).toBe(true);
    expect(resultText(created)).toBe('This server cannot create notebooks: no loaded plugin creates them.');
    // Core knows no daemon: the daemon's section of session_status is its backends' to give.
    const status = await harness.callJson('session_status');
    expect(status).not.toHaveProperty('daemon');
  });

  describe('resources', () => {
    it('lists one resource per active or parked notebook and reads each by notebook id', async () => {
      harness = await startChildServerTestHarness();
      expect((await harness.client.listResources()).resources).toEqual([]);
      const a = await harness.callJson('connect_notebook', { path: 'analysis.ipynb' });
      await harness.callJson('create_cell', { source: 'x = 1' });
      await harness.callJson('create_cell', { source: '# Title', cell_type: 'markdown' });
      const b = await harness.callJson('create_notebook');

      const { resources } = await harness.client.listResources();
      expect(resources).toEqual([
        expect.objectContaining({
          uri: `nteract://notebook/${b.notebook_id}`,
          name: `Untitled ${String(b.notebook_id).slice(0, 8)}`,
          mimeType: 'application/x-ipynb+json',
        }),
        expect.objectContaining({
          uri: `nteract://notebook/${a.notebook_id}`,
          name: 'analysis.ipynb',
          mimeType: 'application/x-ipynb+json',
        }),
      ]);

      // The parked notebook is read from its own handle, without switching.
      const read = await harness.client.readResource({ uri: `nteract://notebook/${a.notebook_id}` });
      const [content] = read.contents;
      expect(content).toMatchObject({
        uri: `nteract://notebook/${a.notebook_id}`,
        mimeType: 'application/x-ipynb+json',
      });
      const notebook = JSON.parse(String(content && 'text' in content ? content.text : ''));
      expect(notebook.nbformat).toBe(4);
      expect(notebook.cells).toEqual([
        { id: 'cell-1', cell_type: 'code', source: 'x = 1', metadata: {}, outputs: [], execution_count: null },
        { id: 'cell-2', cell_type: 'markdown', source: '# Title', metadata: {} },
      ]);
      expect(harness.slot.active?.handle.notebookId).toBe(b.notebook_id);

      const unknown = 'nteract://notebook/00000000-0000-4000-8000-000000000000';
      // The specification's resource-not-found error: -32002 with the URI as data.
      const refused = await harness.client.readResource({ uri: unknown }).then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
      expect(refused).toBeInstanceOf(McpError);
      expect(refused).toMatchObject({
        code: -32002,
        message: `MCP error -32002: Unknown resource: ${unknown}`,
        data: { uri: unknown },
      });
    });

    it('sends resources/list_changed when the slot changes', async () => {
      harness = await startChildServerTestHarness();
      const before = harness.resourceListChanges();
      await harness.callJson('connect_notebook', { path: 'a.ipynb' });
      await expect.poll(() => harness?.resourceListChanges()).toBeGreaterThan(before);
      const afterConnect = harness.resourceListChanges();
      await harness.call('disconnect_notebook');
      await expect.poll(() => harness?.resourceListChanges()).toBeGreaterThan(afterConnect);
    });

    it('sends no list_changed before the client has sent notifications/initialized', async () => {
      const container = createTestContainer().override(Logger, new RecordingLogger()).build();
      const child = createChildMcpServer(container, { version: '1', cwd: '/' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const received: JSONRPCMessage[] = [];
      clientSide.onmessage = (message) => received.push(message);
      await child.server.connect(serverSide);
      await clientSide.start();
      await clientSide.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: testClientInfo },
      });
      await expect.poll(() => received.length).toBe(1);

      const activation = container.get(SessionActivation);
      const connect = (id: string) =>
        activation.activate({
          key: id,
          target: { kind: 'notebook-id', notebookId: id },
          origin: 'connect',
          connect: async () => new FakeNotebookHandle({ notebookId: id }),
        });
      await connect('00000000-0000-4000-8000-000000000001');
      // A ping is answered in order: anything sent before its answer has arrived by then.
      await clientSide.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      await expect.poll(() => received.length).toBe(2);
      expect(received.map((message) => ('method' in message ? message.method : 'response'))).toEqual([
        'response',
        'response',
      ]);

      await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await clientSide.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
      await expect.poll(() => received.length).toBe(3);
      await connect('00000000-0000-4000-8000-000000000002');
      await expect
        .poll(() =>
          received.some((message) => 'method' in message && message.method === 'notifications/resources/list_changed'),
        )
        .toBe(true);
      await child.close();
    });
  });

  describe('the session report', () => {
    const reportOf = (result: unknown) => {
      const report = readSessionReport(result);
      expect(report).toBeDefined();
      return report;
    };

    it('is on every tool result, success or tool error, and says where the session stands', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const none = await h.call('get_all_cells');
      expect(none.isError).toBe(true);
      expect(none._meta?.[sessionReportMetaKey]).toEqual({ target: null });

      const path = `${h.cwd}/a.ipynb`;
      const connected = await h.call('connect_notebook', { path });
      const id = h.slot.active?.handle.notebookId;
      expect(reportOf(connected)).toEqual({ target: path, notebookId: id });
      const failedEdit = await h.call('connect_notebook', { url: 'http://h:8888/lab/tree/x.ipynb' });
      expect(failedEdit.isError).toBe(true);
      expect(reportOf(failedEdit)).toEqual({ target: path, notebookId: id });

      const created = await h.call('create_notebook');
      const uuid = h.slot.active?.handle.notebookId as string;
      expect(reportOf(created)).toEqual({ target: uuid, notebookId: uuid });
      const saved = await h.call('save_notebook', { path: `${h.cwd}/saved.ipynb` });
      expect(reportOf(saved)).toEqual({ target: `${h.cwd}/saved.ipynb`, notebookId: uuid });

      const disconnected = await h.call('disconnect_notebook');
      expect(reportOf(disconnected)).toEqual({ target: null });
    });

    it('names the target being recovered while the slot is empty, until an explicit disconnect cancels it', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const recovery = h.container.get(SessionRecoveryState);
      recovery.setRecovering({ kind: 'local-path', path: '/n/lost.ipynb', existed: true }, h.slot.intentEpoch);
      recovery.requestRejoin('/n/lost.ipynb');
      const status = await h.call('session_status');
      const expected = { target: '/n/lost.ipynb', rejoin: { requested: '/n/lost.ipynb', outcome: 'pending' } };
      expect(reportOf(status)).toEqual(expected);
      expect(JSON.parse(resultText(status)).session_report).toEqual(expected);

      const cancelled = await h.call('disconnect_notebook');
      expect(cancelled.isError).toBeFalsy();
      expect(resultText(cancelled)).toContain('Cancelled the automatic rejoin of /n/lost.ipynb');
      expect(reportOf(cancelled)).toEqual({ target: null, rejoin: { requested: '/n/lost.ipynb', outcome: 'pending' } });
    });

    it('lets a notebook tool wait for a rejoin in progress instead of failing just before it lands', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const recovery = h.container.get(SessionRecoveryState);
      const path = `${h.cwd}/lost.ipynb`;
      recovery.setRecovering({ kind: 'local-path', path, existed: true }, h.slot.intentEpoch);
      recovery.setAttempting(true);
      let answered = false;
      const pending = h.call('get_all_cells').then((result) => {
        answered = true;
        return result;
      });
      const status = await h.call('session_status');
      expect(reportOf(status)).toEqual({ target: path });
      expect(answered).toBe(false);
      await h.container.get(SessionActivation).activate({
        key: path,
        target: { kind: 'local-path', path, existed: true },
        origin: 'rejoin',
        connect: () => (h.daemon as NonNullable<typeof h.daemon>).openNotebook(path, { peerLabel: 'x' }),
      });
      const result = await pending;
      expect(result.isError).toBeFalsy();
      expect(reportOf(result)).toEqual({ target: path, notebookId: h.slot.active?.handle.notebookId });
    });

    it('runs a call that met a lost daemon connection once more, on the session the rejoin installs', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const created = await h.callJson('create_notebook');
      const lost = h.daemon?.handles.at(-1) as FakeNotebookHandle;
      // As the daemon watch loop does: it brings lost sessions back.
      h.container.get(SessionRecoveryState).setWatched(true);
      // The daemon died; the watch loop has not removed the session yet.
      lost.simulateClose('disconnected');
      let answered = false;
      const pending = h.call('get_all_cells').finally(() => {
        answered = true;
      });
      // The call failed on the closed handle and now waits for the rejoin (not answered yet).
      await expect
        .poll(
          () =>
            answered ||
            h.logger.records.some((record) => record.message.startsWith('the session was lost under a call')),
        )
        .toBe(true);
      expect(answered).toBe(false);
      const path = `${h.cwd}/back.ipynb`;
      await h.container.get(SessionActivation).activate({
        key: path,
        target: { kind: 'local-path', path, existed: true },
        origin: 'rejoin',
        connect: () => (h.daemon as NonNullable<typeof h.daemon>).openNotebook(path, { peerLabel: 'x' }),
      });
      const result = await pending;
      expect(result.isError, resultText(result)).toBeFalsy();
      expect(reportOf(result)?.notebookId).not.toBe(created.notebook_id);
      expect(reportOf(result)?.notebookId).toBe(h.slot.active?.handle.notebookId);
    });

    it('runs a mutation whose session the watch loop took away under it once more, with the same idempotency key', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const lost = await h.createNotebook();
      const recovery = h.container.get(SessionRecoveryState);
      recovery.setWatched(true);
      // The daemon applies the edit, then stops answering.
      lost.loseAnswerOf('insertCell', true);
      const pending = h.call('create_cell', { source: 'x = 1' });
      await expect.poll(() => lost.mutationKeys.length).toBe(1);
      // The watch loop's reconciliation: the session is removed (its peer closed) to be brought back.
      h.slot.removeWhere(() => true, 'the daemon is gone');
      recovery.setRecovering({ kind: 'notebook-id', notebookId: lost.notebookId }, h.slot.intentEpoch);
      await expect
        .poll(() => h.logger.records.some((record) => record.message.startsWith('the session was lost under a call')))
        .toBe(true);
      const path = `${h.cwd}/back.ipynb`;
      await h.container.get(SessionActivation).activate({
        key: path,
        target: { kind: 'local-path', path, existed: true },
        origin: 'rejoin',
        connect: () => (h.daemon as NonNullable<typeof h.daemon>).openNotebook(path, { peerLabel: 'x' }),
      });
      const result = await pending;
      expect(result.isError, resultText(result)).toBeFalsy();
      const back = h.daemon?.handles.at(-1) as FakeNotebookHandle;
      // The call carried no key of its own (no proxy): the child made one, and sent it both times.
      expect(lost.mutationKeys[0]).toMatch(/^[0-9a-f]{32}:insert$/);
      expect(back.mutationKeys).toEqual([lost.mutationKeys[0]]);
    });

    it('says the outcome is unknown when the session is not back in time, and sends the same call again with its first key', async () => {
      const clock = new ManualClock();
      harness = await startChildServerTestHarness({ clock });
      const h = harness;
      const lost = await h.createNotebook();
      const recovery = h.container.get(SessionRecoveryState);
      recovery.setWatched(true);
      lost.loseAnswerOf('insertCell', true);
      const pending = h.call('create_cell', { source: 'y = 2', cell_type: 'code' });
      await expect.poll(() => lost.mutationKeys.length).toBe(1);
      h.slot.removeWhere(() => true, 'the daemon is gone');
      recovery.setRecovering({ kind: 'notebook-id', notebookId: lost.notebookId }, h.slot.intentEpoch);
      await expect
        .poll(() => h.logger.records.some((record) => record.message.startsWith('the session was lost under a call')))
        .toBe(true);
      await clock.advanceAndSettle(46_000);
      const unknown = await pending;
      expect(unknown.isError).toBe(true);
      expect(resultText(unknown)).toMatch(/^Outcome unknown: .*create_cell.* same arguments is safe/);
      // The agent retries (its arguments in another order): sent with the first call's key.
      const path = `${h.cwd}/back.ipynb`;
      await h.container.get(SessionActivation).activate({
        key: path,
        target: { kind: 'local-path', path, existed: true },
        origin: 'rejoin',
        connect: () => (h.daemon as NonNullable<typeof h.daemon>).openNotebook(path, { peerLabel: 'x' }),
      });
      const retried = await h.call('create_cell', { cell_type: 'code', source: 'y = 2' });
      expect(retried.isError, resultText(retried)).toBeFalsy();
      const back = h.daemon?.handles.at(-1) as FakeNotebookHandle;
      expect(back.mutationKeys).toEqual([lost.mutationKeys[0]]);
      // Settled: a third identical call is a call of its own.
      await h.call('create_cell', { source: 'y = 2', cell_type: 'code' });
      expect(back.mutationKeys[1]).not.toBe(lost.mutationKeys[0]);
    });

    it('answers at once when no attempt is running, and after the wait when the rejoin does not land', async () => {
      harness = await startChildServerTestHarness({ server: { recoveryWaitMs: 50 } });
      const h = harness;
      const recovery = h.container.get(SessionRecoveryState);
      recovery.setRecovering({ kind: 'local-path', path: '/n/lost.ipynb', existed: true }, h.slot.intentEpoch);
      expect((await h.call('get_all_cells')).isError).toBe(true);
      recovery.setAttempting(true);
      const late = await h.call('get_all_cells');
      expect(late.isError).toBe(true);
      expect(reportOf(late)).toEqual({ target: '/n/lost.ipynb' });
      // With a watch loop that brings sessions back, the refusal says so (nothing to reconnect by hand).
      recovery.setWatched(true);
      const watched = await h.call('create_cell', { source: 'x' });
      expect(watched.content.at(-1)).toMatchObject({
        text: expect.stringMatching(
          /^\[nteract\] This create_cell did nothing: the session on \/n\/lost.ipynb was lost/,
        ),
      });
    });

    it('gives a hosted session its URL without credentials', async () => {
      harness = await startChildServerTestHarness();
      const h = harness;
      const hosted = new FakeNotebookHandle({ notebookId: 'hosted-1' });
      await h.container.get(SessionActivation).activate({
        key: 'hosted',
        target: {
          kind: 'hosted-url',
          url: 'http://h:8888/lab/tree/a.ipynb',
          serverUrl: 'http://h:8888/',
          notebookPath: 'a.ipynb',
          token: undefined,
        },
        origin: 'connect',
        connect: async () => hosted,
      });
      expect(reportOf(await h.call('session_status'))).toEqual({
        target: 'http://h:8888/lab/tree/a.ipynb',
        notebookId: 'hosted-1',
      });
    });
  });
});
