import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const runtimed = fileURLToPath(import.meta.resolve('@nteract-mcp/daemon/runtimed'));
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh user: empty HOME and XDG dirs, no daemon running, none of our variables set. */
function freshUser(): { root: string; env: Record<string, string> } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'embedding-')));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const dirs = {
    HOME: join(root, 'home'),
    XDG_CACHE_HOME: join(root, 'cache'),
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_RUNTIME_DIR: join(root, 'run'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('NTERACT_MCP_') && !key.startsWith('RUNTIMED_')) env[key] = value;
  }
  return { root, env: { ...env, ...dirs } };
}

function runtimedCli(env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, [runtimed, ...args], { env, encoding: 'utf8', timeout: 30_000 });
}

function textOf(result: CallToolResult): string {
  return result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

const report = {
  cells: [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Sales report\nSome words.\n## Data' },
    { cell_type: 'code', id: 'load', metadata: {}, source: 'rows = 3', outputs: [], execution_count: null },
  ],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5,
};

describe('an MCP server of our own, embedding nteract-mcp core', () => {
  it('serves core’s tools and ours over stdio; ours reads a notebook opened in the daemon it auto-started', {
    timeout: 120_000,
  }, async () => {
    const { root, env } = freshUser();
    const notebook = join(root, 'report.ipynb');
    writeFileSync(notebook, JSON.stringify(report));
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main],
      env,
      cwd: root,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    // It declares our extension (src/outline-extension.ts): the outline then comes structured too.
    const client = new Client(
      { name: 'embedding-test', version: '1.0.0' },
      { capabilities: { extensions: { 'example.com/outline': {} } } as Record<string, object> },
    );
    cleanups.push(() => {
      // Stops the daemon our server auto-started, and checks it is gone.
      runtimedCli(env, 'stop');
      expect(runtimedCli(env, 'status').status).toBe(3);
    });
    cleanups.push(() => client.close());
    await client.connect(transport);

    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['notebook_outline', 'connect_notebook', 'create_cell', 'get_cell']));
    expect(tools.find((tool) => tool.name === 'notebook_outline')?.inputSchema.properties).toHaveProperty('max_level');
    expect(client.getServerCapabilities()?.extensions).toHaveProperty(['example.com/outline']);
    expect(tools.find((tool) => tool.name === 'notebook_outline')?._meta).toMatchObject({
      'example.com/outline': 'headings',
    });

    const early = (await client.callTool({ name: 'notebook_outline' })) as CallToolResult;
    expect(early.isError).toBe(true);
    expect(textOf(early)).toContain('No active notebook session');

    const connected = (await client.callTool({
      name: 'connect_notebook',
      arguments: { path: notebook },
    })) as CallToolResult;
    expect(connected.isError, textOf(connected) + stderr).toBeFalsy();
    const added = (await client.callTool({
      name: 'create_cell',
      arguments: { source: '### Findings', cell_type: 'markdown' },
    })) as CallToolResult;
    expect(added.isError, textOf(added)).toBeFalsy();

    const outline = (await client.callTool({ name: 'notebook_outline', arguments: {} })) as CallToolResult;
    expect(outline.isError, textOf(outline)).toBeFalsy();
    const headings = (JSON.parse(textOf(outline)) as { headings: { level: number; title: string }[] }).headings;
    expect(outline.structuredContent).toEqual({ headings });
    expect(headings.map(({ level, title }) => ({ level, title }))).toEqual([
      { level: 1, title: 'Sales report' },
      { level: 2, title: 'Data' },
      { level: 3, title: 'Findings' },
    ]);
    const shallow = (await client.callTool({
      name: 'notebook_outline',
      arguments: { max_level: 1 },
    })) as CallToolResult;
    expect(JSON.parse(textOf(shallow)).headings).toEqual([{ level: 1, title: 'Sales report', cell_id: 'intro' }]);

    // The notebook is open in the daemon our server started, with our client as its peer.
    const status = runtimedCli(env, 'status', '--json');
    expect(status.status, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).rooms).toEqual([
      expect.objectContaining({
        notebook_path: notebook,
        active_peers: 1,
        peer_labels: [expect.stringMatching(/^embedding-test agent:/)],
      }),
    ]);
  });
});
