// Protocol details a conformance-minded client notices, read as the raw JSON-RPC lines the shipped
// nteract-mcp writes (fresh HOME, no daemon, default options): an MCP SDK client would hide them (it
// never sends a request before `notifications/initialized`, and prints an error as
// "MCP error <code>: <message>" whatever the message says).
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUserEnvironment,
  type RawLine,
  type RawProxy,
  shippedBins,
  startRawProxy,
  type UserEnvironment,
} from './support/index.js';

const peers: RawProxy[] = [];
afterEach(async () => {
  for (const peer of peers.splice(0)) await peer.stop();
});

/** The shipped proxy on raw stdio lines, in a fresh user environment it removes when stopped. */
function startRawPeer(): RawProxy {
  const environment: UserEnvironment = createUserEnvironment(shippedBins.runtimed);
  const proxy = startRawProxy(environment);
  const peer: RawProxy = {
    ...proxy,
    stop: async () => {
      await proxy.stop();
      await environment.cleanup();
    },
  };
  peers.push(peer);
  return peer;
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  // The tasks methods are served to a client that declares the tasks extension.
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** A connection of `era` opened and ready; `request` then builds a request of that era. */
async function openConnection(era: 'legacy' | 'native') {
  const peer = startRawPeer();
  if (era === 'legacy') {
    peer.send(initialize);
    await peer.answer(1);
    peer.send(initialized);
  }
  const request = (id: number | string, method: string, params: Record<string, unknown> = {}) =>
    peer.send({
      jsonrpc: '2.0',
      id,
      method,
      params: era === 'native' ? { ...params, _meta: envelope } : params,
    });
  return { peer, request };
}

const toolNames = (line: RawLine) => ((line.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);

describe('a tools/list between initialize and notifications/initialized (issue 49, 1)', () => {
  it('is answered with the tool list at once, from a child the request starts, not held for the 10 s fallback', {
    timeout: 60_000,
  }, async () => {
    const peer = startRawPeer();
    peer.send(initialize);
    await peer.answer(1);
    // Allowed once initialize is answered; the MCP reference server answers it at once. A fresh
    // HOME has no tool cache: only a child knows the list.
    const sent = Date.now();
    peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const early = await peer.answer(2, sent);
    expect(early.line.error).toBeUndefined();
    // The proxy's fallback after 10 s was `reconnect` alone; this is the child's list.
    expect(toolNames(early.line)).toEqual(expect.arrayContaining(['create_notebook', 'get_all_cells', 'reconnect']));
    expect(early.afterMs).toBeLessThan(10_000);

    // The client's notifications/initialized then changes nothing: the same child, the same list.
    peer.send(initialized);
    peer.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const later = await peer.answer(3);
    expect(toolNames(later.line)).toEqual(toolNames(early.line));
    expect(peer.stderr().match(/child spawned/g)).toHaveLength(1);
    expect(peer.lines().filter((line) => line.id === 2)).toHaveLength(1);
  });
});

describe('resources/read of an unknown resource (issue 49, 2)', () => {
  // The resource-not-found error of each era's specification: -32002 up to 2025-11-25, -32602 from
  // 2026-07-28 on (SEP-2164, as @modelcontextprotocol/conformance checks it); the URI in data.uri.
  const codes = { legacy: -32002, native: -32602 } as const;
  for (const era of ['legacy', 'native'] as const) {
    it(`is the resource-not-found error of its era, ${codes[era]} with data.uri (${era} era)`, {
      timeout: 60_000,
    }, async () => {
      const { peer, request } = await openConnection(era);
      // One of this server's URIs naming no open notebook, and a URI that is not this server's.
      const closed = 'nteract://notebook/0b1e5a9c-2f4d-4c41-9e57-7d3f0a6b8c21';
      const foreign = 'file:///nowhere/notes.txt';
      request('closed', 'resources/read', { uri: closed });
      request('foreign', 'resources/read', { uri: foreign });
      for (const [id, uri] of [
        ['closed', closed],
        ['foreign', foreign],
      ] as const) {
        const { line } = await peer.answer(id);
        expect(line.error, JSON.stringify(line)).toEqual({
          code: codes[era],
          message: `Unknown resource: ${uri}`,
          data: { uri },
        });
      }
    });
  }
});

describe('JSON-RPC error messages (issue 49, 3)', () => {
  for (const era of ['legacy', 'native'] as const) {
    it(`carry the plain message, without the SDK's "MCP error <code>: " prefix (${era} era)`, {
      timeout: 60_000,
    }, async () => {
      const { peer, request } = await openConnection(era);
      // Refused by the child with the MCP SDK's McpError (2026-07-28 has no tasks/result).
      const methods = era === 'legacy' ? ['get', 'result', 'cancel'] : ['get', 'cancel'];
      for (const method of methods) request(method, `tasks/${method}`, { taskId: 'no-such-task' });
      for (const id of methods) {
        const { line } = await peer.answer(id);
        expect(line.error?.code, JSON.stringify(line)).toBe(-32602);
        expect(line.error?.message, JSON.stringify(line)).toMatch(/^Task not found: no-such-task\b/);
      }
      // The other errors a client meets: an unknown tool (the child's registry), bad params found by
      // the SDK's schemas in the child (its McpError), and by the proxy itself (a call without a name).
      const refusals = [
        ['unknown-tool', 'tools/call', { name: 'no_such_tool', arguments: {} }, /^Unknown tool: no_such_tool$/],
        ['no-uri', 'resources/read', {}, /^Invalid params for resources\/read: params\.uri: /],
        ['no-task-id', 'tasks/get', {}, /^Invalid params for tasks\/get: params\.taskId: /],
        ['bad-cursor', 'resources/templates/list', { cursor: 7 }, /^Invalid params for resources\/templates\/list: /],
        ['no-name', 'tools/call', { arguments: {} }, /^Invalid params: tools\/call needs params\.name\b/],
      ] as const;
      for (const [id, method, params] of refusals) request(id, method, params);
      for (const [id, , , message] of refusals) {
        const { line } = await peer.answer(id);
        expect(line.error?.code, JSON.stringify(line)).toBe(-32602);
        expect(line.error?.message, JSON.stringify(line)).toMatch(message);
      }
      if (era === 'native') {
        // The tasks methods 2026-07-28 dropped, refused by the child's era gate with an McpError.
        for (const method of ['result', 'list'])
          request(`gone-${method}`, `tasks/${method}`, method === 'result' ? { taskId: 'no-such-task' } : {});
        for (const method of ['result', 'list']) {
          const { line } = await peer.answer(`gone-${method}`);
          expect(line.error, JSON.stringify(line)).toEqual({
            code: -32601,
            message: `Method not found: tasks/${method} is not part of this protocol era`,
          });
        }
        // The child's own McpError (a capability the request did not declare): plain too, its data kept.
        peer.send({
          jsonrpc: '2.0',
          id: 'undeclared',
          method: 'tasks/get',
          params: { taskId: 'no-such-task', _meta: { ...envelope, 'io.modelcontextprotocol/clientCapabilities': {} } },
        });
        const { line } = await peer.answer('undeclared');
        expect(line.error, JSON.stringify(line)).toEqual({
          code: -32021,
          message: expect.stringMatching(/^Missing required client capability: tasks\/get needs /),
          data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
        });
      }
      expect(peer.lines().filter((line) => line.error?.message.includes('MCP error'))).toEqual([]);
    });
  }
});
