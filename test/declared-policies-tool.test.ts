import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUserEnvironment,
  isAlive,
  shippedBins,
  spawnShippedProxy,
  type UserEnvironment,
  waitFor,
} from './support/index.js';

// A tool from outside core (examples/declared-policies-tool, loaded into the shipped child through
// NTERACT_MCP_PLUGINS) gets the child's call steps by declaring them, through the shipped proxy:
// it runs as an MCP task for a client that asks, asks the person first (elicitation/create, legacy
// era), and, called right after the daemon was SIGKILLed, answers from the session brought back
// (it waits for the rejoin, or runs again on it when the session was lost under the call).

/** The example's plugin module, as built (it exports `createPlugin`). */
const examplePlugin = fileURLToPath(new URL('../examples/declared-policies-tool/dist/plugin.js', import.meta.url));

type Json = Record<string, unknown>;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Peer {
  readonly client: Client;
  readonly environment: UserEnvironment;
  /** The elicitations the client was asked, in order. */
  readonly asked: Json[];
  /** How the person answers a confirmation. */
  confirms: boolean;
  call(name: string, args?: Json): Promise<{ text: string; isError: boolean; json: Json | undefined }>;
  stderr(): string;
}

/** The shipped proxy in a fresh user environment with the example plugin, driven by a client that declares elicitation. */
async function startPeer(): Promise<Peer> {
  const environment = createUserEnvironment(shippedBins.runtimed, { env: { NTERACT_MCP_PLUGINS: examplePlugin } });
  const { transport, stderr } = spawnShippedProxy(StdioClientTransport, {
    env: environment.env,
    cwd: environment.dirs.project,
  });
  const client = new Client({ name: 'declared-policies', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked: Json[] = [];
  const peer: Peer = {
    client,
    environment,
    asked,
    confirms: true,
    call: async (name, args = {}) => {
      const raw = await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 });
      const texts = (raw.content as { type: string; text?: string }[]).map((item) => item.text ?? '');
      const jsonText = texts.find((text) => text.trimStart().startsWith('{'));
      return {
        text: texts.join('\n'),
        isError: raw.isError === true,
        json: jsonText ? JSON.parse(jsonText) : undefined,
      };
    },
    stderr,
  };
  client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
    asked.push(request.params as Json);
    return peer.confirms ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
  });
  cleanups.push(async () => {
    await client.close().catch(() => undefined);
    await environment.cleanup();
  });
  await client.connect(transport);
  return peer;
}

describe('a third-party tool that declares its policies, in the shipped product', () => {
  it('runs as a task, asks the person first and waits for the session brought back after a daemon SIGKILL, by declaring so', {
    timeout: 300_000,
  }, async () => {
    const peer = await startPeer();
    const { tools } = await peer.client.listTools();
    const tool = tools.find((candidate) => candidate.name === 'rerun_all_cells');
    expect(tool, peer.stderr()).toBeDefined();
    expect(tool?.execution).toEqual({ taskSupport: 'optional' });

    expect((await peer.call('create_notebook', {})).isError).toBe(false);
    const cell = await peer.call('create_cell', { source: "x = 20 + 1\nprint('ran', x)", and_run: true });
    expect(cell.isError, cell.text).toBe(false);
    const saved = await peer.call('save_notebook', { path: join(peer.environment.dirs.project, 'policies.ipynb') });
    expect(saved.isError, saved.text).toBe(false);

    // Confirm: a cell ran, so the person is asked with the tool's own question; declined, nothing runs.
    peer.confirms = false;
    const declined = await peer.call('rerun_all_cells');
    expect(declined.text).toContain('the person did not confirm rerun_all_cells; nothing was changed');
    expect(peer.asked).toHaveLength(1);
    expect(String(peer.asked[0]?.message)).toContain('wants to run every code cell of notebook');
    peer.confirms = true;
    const accepted = await peer.call('rerun_all_cells');
    expect(accepted.isError, accepted.text).toBe(false);
    expect(accepted.json?.ran).toEqual([expect.objectContaining({ status: 'ok', execution_count: 2 })]);
    expect(peer.asked).toHaveLength(2);

    // Task: a client that asks for one (legacy task augmentation) gets a task; tasks/result gives the run's output.
    const created = await peer.client.request(
      { method: 'tools/call', params: { name: 'rerun_all_cells', arguments: {}, task: {} } },
      CreateTaskResultSchema,
      { timeout: 180_000 },
    );
    expect(created.task.status).toBe('working');
    const result = await peer.client.request(
      { method: 'tasks/result', params: { taskId: created.task.taskId } },
      CallToolResultSchema,
      { timeout: 180_000 },
    );
    expect(JSON.stringify(result.content)).toContain('ran 21');

    // Recovery: the daemon dies; the very next call waits for the session brought back and runs on it.
    const daemon = await waitFor('the daemon', () => peer.environment.daemonPid());
    process.kill(daemon, 'SIGKILL');
    await waitFor('the daemon to be gone', () => !isAlive(daemon), { timeoutMs: 10_000 });
    const after = await peer.call('rerun_all_cells');
    expect(after.isError, after.text + peer.stderr().slice(-3000)).toBe(false);
    expect(after.json?.ran).toEqual([expect.objectContaining({ status: 'ok' })]);
  });
});
