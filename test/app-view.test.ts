import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import { build } from 'esbuild';
import type { Frame, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  childrenOf,
  createUserEnvironment,
  isAlive,
  type RawLine,
  shippedBins,
  spawnShippedProxy,
  startRawProxy,
  type UserEnvironment,
  waitFor,
} from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * The MCP Apps view (issue 48) through the shipped proxy as a user starts it (fresh HOME, nothing
 * pre-started): a client that declares `io.modelcontextprotocol/ui` finds the view announced, its
 * tools pointing at it and their results structured for it, and the view, driven by ext-apps'
 * own host side (`AppBridge`) in headless Chromium, shows a plot, calls a tool when clicked, and
 * keeps working after the child is killed. A client that does not declare it gets exactly the
 * answers it gets with the view left out of the bins.
 */

const uiExtension = 'io.modelcontextprotocol/ui';
const viewUri = 'ui://nteract-mcp/cells.html';
const testDir = dirname(fileURLToPath(import.meta.url));
/** Where the screenshots go: `NTERACT_APP_VIEW_SCREENSHOTS` (docs/images to refresh the README's), else a temp dir. */
const screenshotDir = process.env.NTERACT_APP_VIEW_SCREENSHOTS
  ? resolve(process.env.NTERACT_APP_VIEW_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), 'nmcp-app-view-'));

const browser = useChromium();

/** The page's globals as the functions evaluated in it use them (the test's tsconfig has no DOM types). */
// biome-ignore lint/suspicious/noExplicitAny: the browser's objects, untyped here
type Globals = Record<string, any>;
/** An `<img>`, as far as the test reads it. */
interface Img {
  readonly complete: boolean;
  readonly naturalWidth: number;
  readonly naturalHeight: number;
}

/** A subclass of the stdio transport: the v2 client then runs its era probe on this process (no sibling spawn). */
class InPlace extends StdioClientTransport {}

interface Host {
  readonly client: Client;
  childPid(): number | undefined;
  stderr(): string;
  stop(): Promise<void>;
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The shipped proxy driven by the v2 client in `era`, declaring the MCP Apps extension. */
async function startHost(era: 'legacy' | 'native', shared?: UserEnvironment): Promise<Host> {
  const environment = shared ?? createUserEnvironment(shippedBins.runtimed);
  const { transport, stderr } = spawnShippedProxy(era === 'legacy' ? StdioClientTransport : InPlace, {
    env: environment.env,
    cwd: environment.dirs.project,
  });
  const client = new Client({ name: 'app-host', version: '1.0.0' }, {
    capabilities: { extensions: { [uiExtension]: { mimeTypes: ['text/html;profile=mcp-app'] } } },
    versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
  } as ConstructorParameters<typeof Client>[1]);
  const childPid = (): number | undefined => {
    const proxy = transport.pid;
    if (proxy === null) return undefined;
    return childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
  };
  const stop = async () => {
    const started = [transport.pid, childPid()].filter((pid): pid is number => typeof pid === 'number');
    await client.close().catch(() => undefined);
    for (const pid of started) {
      await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
        if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      });
    }
    if (!shared) await environment.cleanup();
  };
  stops.push(stop);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the v2 client did not connect: ${(error as Error).message}\n${stderr()}`);
  }
  return { client, childPid, stderr, stop };
}

type ToolResult = Record<string, unknown> & {
  content?: { type: string; text?: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};

async function call(host: Host, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const result = (await host.client.callTool({ name, arguments: args }, { timeout: 180_000 })) as ToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}\n${host.stderr().slice(-3000)}`).not.toBe(true);
  return result;
}

/** ext-apps' host side (AppBridge, PostMessageTransport), bundled for the page. */
async function bridgeScript(): Promise<string> {
  const bundled = await build({
    stdin: {
      contents:
        "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';\nwindow.AppBridge = AppBridge;\nwindow.PostMessageTransport = PostMessageTransport;",
      resolveDir: testDir,
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
  });
  return bundled.outputFiles[0]?.text ?? '';
}

const hostStyles = {
  light: { '--color-background-primary': '#ffffff', '--color-text-primary': '#1f2328', '--font-sans': 'sans-serif' },
  dark: {
    '--color-background-primary': '#1e1e24',
    '--color-background-secondary': '#2a2a33',
    '--color-text-primary': '#ececf1',
    '--color-border-primary': '#44444f',
    '--font-sans': 'sans-serif',
  },
};

/**
 * A page hosting the view as a client does: the `ui://` resource's HTML in a sandboxed frame (scripts
 * only), an AppBridge on it whose tool calls go to `host`'s MCP client (the person's click) and whose
 * opened links are recorded.
 */
async function hostView(host: Host, html: string): Promise<{ page: Page; view: () => Frame; links: string[] }> {
  const page = await browser().newPage({ viewport: { width: 760, height: 900 } });
  const links: string[] = [];
  const toolCalls: string[] = [];
  await page.exposeFunction('hostCallTool', async (name: string, args: Record<string, unknown>) => {
    toolCalls.push(name);
    return await host.client.callTool({ name, arguments: args }, { timeout: 180_000 });
  });
  await page.exposeFunction('hostOpenLink', (url: string) => {
    links.push(url);
  });
  await page.setContent(
    '<!doctype html><html><body style="margin:0;background:#ddd"><iframe id="view" sandbox="allow-scripts" style="width:740px;height:200px;border:0;margin:10px;display:block"></iframe></body></html>',
  );
  await page.addScriptTag({ content: await bridgeScript() });
  await page.evaluate(
    async ({ html, styles }) => {
      const w = globalThis as unknown as Globals;
      const frame = w.document.getElementById('view');
      const bridge = new w.AppBridge(
        null,
        { name: 'test-host', version: '1.0.0' },
        { openLinks: {}, serverTools: {} },
        { hostContext: { theme: 'light', styles: { variables: styles }, displayMode: 'inline' } },
      );
      bridge.oncalltool = async (params: { name: string; arguments?: Record<string, unknown> }) =>
        await w.hostCallTool(params.name, params.arguments ?? {});
      bridge.onopenlink = async (params: { url: string }) => {
        await w.hostOpenLink(params.url);
        return {};
      };
      bridge.onsizechange = (params: { height?: number }) => {
        if (params.height !== undefined) frame.style.height = `${params.height}px`;
        w.viewHeight = params.height;
      };
      bridge.oninitialized = () => {
        w.viewInitialized = true;
      };
      w.bridge = bridge;
      await bridge.connect(new w.PostMessageTransport(frame.contentWindow, frame.contentWindow));
      frame.srcdoc = html;
    },
    { html, styles: hostStyles.light },
  );
  await page.waitForFunction(() => (globalThis as unknown as Globals).viewInitialized === true);
  const view = () => {
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    if (!frame) throw new Error('the view frame is gone');
    return frame;
  };
  return { page, view, links };
}

/** The execution count the view shows for its first code cell. */
async function shownCount(view: Frame): Promise<string> {
  return (await view.locator('.cell-code .execution-count').first().textContent()) ?? '';
}

const plotCode = [
  'import matplotlib',
  "matplotlib.use('module://matplotlib_inline.backend_inline')",
  'import matplotlib.pyplot as plt',
  'xs = [x / 10 for x in range(63)]',
  'import math',
  'plt.figure(figsize=(6, 3))',
  "plt.plot(xs, [math.sin(x) for x in xs], label='sin')",
  "plt.plot(xs, [math.cos(x) for x in xs], label='cos')",
  'plt.legend()',
  "print('\\x1b[32mplotted\\x1b[0m', len(xs), 'points')",
  'plt.show()',
].join('\n');

describe('the MCP Apps view, hosted as a client hosts it', () => {
  it('is announced, shows the plot the agent made, re-runs the cell on a click, and keeps working after the child is killed', {
    timeout: 300_000,
  }, async () => {
    const host = await startHost('legacy');
    expect(host.client.getServerCapabilities()?.extensions?.[uiExtension]).toBeDefined();
    const { tools } = await host.client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['create_cell', 'set_cell', 'execute_cell', 'run_all_cells', 'get_cell', 'get_results']) {
      expect(getToolUiResourceUri(byName.get(name) ?? { name }), name).toBe(viewUri);
      expect(byName.get(name)?._meta?.['ui/resourceUri'], name).toBe(viewUri);
    }
    expect(getToolUiResourceUri(byName.get('list_kernels') ?? { name: 'list_kernels' })).toBeUndefined();
    const { resources } = await host.client.listResources();
    expect(resources.find((resource) => resource.uri === viewUri)).toMatchObject({
      mimeType: 'text/html;profile=mcp-app',
    });
    const read = await host.client.readResource({ uri: viewUri });
    const html = (read.contents[0] as { text: string }).text;
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/html;profile=mcp-app' });
    expect(read.contents[0]?._meta).toMatchObject({ ui: { csp: { connectDomains: [], resourceDomains: [] } } });
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\//);

    await call(host, 'create_notebook');
    const created = await call(host, 'create_cell', { source: plotCode, and_run: true, timeout_secs: 120 });
    const structured = created.structuredContent as {
      cells: { id: string; outputs: { data?: Record<string, unknown> }[] }[];
    };
    expect(structured).toMatchObject({ view: 'nteract-cells', cells: [{ executionCount: 1, status: 'done' }] });
    expect(structured.cells[0]?.outputs.some((output) => typeof output.data?.['image/png'] === 'string')).toBe(true);
    // What the model reads is what it read before: the content blocks, the image among them.
    expect(created.content?.some((item) => item.type === 'image')).toBe(true);

    const { page, view, links } = await hostView(host, html);
    await page.evaluate(
      async ({ args, result }) => {
        const bridge = (globalThis as unknown as Globals).bridge;
        await bridge.sendToolInput({ arguments: args });
        await bridge.sendToolResult(result);
      },
      { args: { source: plotCode, and_run: true }, result: created },
    );
    const image = view().locator('.image img').first();
    await image.waitFor();
    await waitFor('the plot to decode', async () =>
      (await image.evaluate((img) => (img as unknown as Img).complete && (img as unknown as Img).naturalWidth > 200))
        ? true
        : undefined,
    );
    const natural = await image.evaluate((img) => [
      (img as unknown as Img).naturalWidth,
      (img as unknown as Img).naturalHeight,
    ]);
    expect(natural[0]).toBeGreaterThan(200);
    expect(natural[1]).toBeGreaterThan(100);
    expect(await view().locator('.ansi-green').first().textContent()).toBe('plotted');
    expect(await shownCount(view())).toBe('[1]');
    await waitFor('the view to report its height', async () =>
      ((await page.evaluate(() => (globalThis as unknown as Globals).viewHeight as number | undefined)) ?? 0) > 300
        ? true
        : undefined,
    );
    mkdirSync(screenshotDir, { recursive: true });
    await page.locator('#view').screenshot({ path: join(screenshotDir, 'app-view-plot.png') });

    // The person clicks re-run: the view calls execute_cell through the host; the new count shows.
    await view().locator('button.rerun').first().click();
    await waitFor('the re-run count', async () => ((await shownCount(view())) === '[2]' ? true : undefined), {
      timeoutMs: 120_000,
    });

    // The live page link opens through the host (ui/open-link).
    const open = view().locator('button.open-live');
    if ((await open.count()) > 0) {
      await open.click();
      await waitFor('the link to open', () => (links.length > 0 ? true : undefined));
      expect(links[0]).toMatch(/^http:\/\/(127\.0\.0\.1|localhost)/);
    }

    // The child dies; the next click still works (a new child rejoins the notebook) and the view updates.
    const child = host.childPid();
    expect(child).toBeDefined();
    process.kill(child as number, 'SIGKILL');
    await waitFor('the child to be gone', () => (isAlive(child as number) ? undefined : true));
    await view().locator('button.rerun').first().click();
    await waitFor(
      'the count after the restart',
      async () => ((await shownCount(view())) === '[3]' ? true : undefined),
      {
        timeoutMs: 120_000,
      },
    );
    expect(host.childPid()).not.toBe(child);

    // It follows the host's theme.
    await page.evaluate(async (styles) => {
      const bridge = (globalThis as unknown as Globals).bridge;
      bridge.setHostContext({ theme: 'dark', styles: { variables: styles }, displayMode: 'inline' });
    }, hostStyles.dark);
    await waitFor('the dark theme', async () =>
      (await view().evaluate(() => {
        const g = globalThis as unknown as Globals;
        return g.getComputedStyle(g.document.body).backgroundColor;
      })) === 'rgb(30, 30, 36)'
        ? true
        : undefined,
    );
    await page.locator('#view').screenshot({ path: join(screenshotDir, 'app-view-dark.png') });

    // Markdown with math, an HTML table (in a nested sandbox), a traceback in colour: each as the view renders it.
    const markdown = await call(host, 'create_cell', {
      cell_type: 'markdown',
      source:
        '## Results\nThe fit is **good**: $R^2 = 0.98$, see `model.summary()`.\n- residuals are small\n- no outliers',
    });
    const table = await call(host, 'create_cell', {
      source:
        "from IPython.display import HTML\nHTML('<table border=1><tr><th>city</th><th>people</th></tr><tr><td>Oslo</td><td>709,000</td></tr></table>')",
      and_run: true,
    });
    const failing = await call(host, 'create_cell', { source: "{'a': 1}['b']", and_run: true });
    const view2 = await hostView(host, html);
    await view2.page.evaluate(
      async (results) => {
        const bridge = (globalThis as unknown as Globals).bridge;
        await bridge.sendToolInput({ arguments: {} });
        for (const result of results) await bridge.sendToolResult(result);
      },
      [markdown, table, failing],
    );
    await view2.view().locator('.cell[data-status="error"] .error').waitFor();
    expect(await view2.view().locator('.markdown h2').textContent()).toBe('Results');
    expect(await view2.view().locator('.markdown .math').textContent()).toBe('R^2 = 0.98');
    expect(await view2.view().locator('iframe.html-output').getAttribute('sandbox')).toBe('');
    expect(await view2.view().locator('.error .ansi-red, .error [class*="ansi-"]').count()).toBeGreaterThan(0);
    await view2.page.locator('#view').screenshot({ path: join(screenshotDir, 'app-view-outputs.png') });

    // A cell of 35 outputs shows 30 and pages the rest in on a click (get_cell with offset, through the host).
    const many = await call(host, 'create_cell', { source: 'for i in range(35):\n    display(i)', and_run: true });
    await view2.page.evaluate(async (result) => {
      await (globalThis as unknown as Globals).bridge.sendToolResult(result);
    }, many);
    const manyCell = view2.view().locator('.cell').last();
    await manyCell.locator('button.more').waitFor();
    expect(await manyCell.locator('.outputs > *').count()).toBe(30);
    await manyCell.locator('button.more').click();
    await waitFor('the paged outputs', async () =>
      (await manyCell.locator('.outputs > *').count()) === 35 ? true : undefined,
    );
    await view2.page.close();
    await page.close();
  });
});

describe('the extension in the 2026-07-28 era, and the tool cache', () => {
  it('decorates per request for a declaring client; the list it leaves in the cache is the plain one an undeclaring client gets', {
    timeout: 300_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    stops.push(() => environment.cleanup());
    const host = await startHost('native', environment);
    const { tools } = await host.client.listTools();
    expect(getToolUiResourceUri(tools.find((tool) => tool.name === 'execute_cell') ?? { name: '' })).toBe(viewUri);
    expect((await host.client.listResources()).resources.map((resource) => resource.uri)).toContain(viewUri);
    await call(host, 'create_notebook');
    const created = await call(host, 'create_cell', { source: '21 * 2', and_run: true, timeout_secs: 120 });
    expect(created.structuredContent).toMatchObject({
      view: 'nteract-cells',
      cells: [{ executionCount: 1, outputs: [{ output_type: 'execute_result', data: { 'text/plain': '42' } }] }],
    });
    await host.stop();

    // The same user's next clients, each its own proxy: the cache file the first one left is read.
    for (const declares of [false, true]) {
      const proxy = startRawProxy(environment);
      stops.push(() => proxy.stop());
      proxy.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: declares ? { extensions: { [uiExtension]: {} } } : {},
          clientInfo: { name: 'next', version: '1' },
        },
      });
      const opened = await proxy.answer(1);
      expect(opened.line.result?.capabilities, JSON.stringify(opened.line)).toMatchObject({ tools: {} });
      expect(((opened.line.result?.capabilities ?? {}) as { extensions?: object }).extensions ?? {}).toEqual(
        declares
          ? expect.objectContaining({ [uiExtension]: expect.any(Object) })
          : expect.not.objectContaining({ [uiExtension]: expect.anything() }),
      );
      proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const listed = (await proxy.answer(2)).line.result?.tools as { name: string; _meta?: Record<string, unknown> }[];
      const executeCell = listed.find((tool) => tool.name === 'execute_cell');
      expect(executeCell?._meta?.['ui/resourceUri'], `declares: ${declares}`).toBe(declares ? viewUri : undefined);
      await proxy.stop();
    }
    // Nor is the child's description to the declaring client (learned, and kept in the cache file)
    // shown to an undeclaring client of that era.
    const proxy = startRawProxy(environment);
    stops.push(() => proxy.stop());
    const plain = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'next', version: '1' },
    };
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: plain } });
    const discovered = (await proxy.answer(1)).line.result as { capabilities: { extensions?: object } };
    expect(discovered.capabilities.extensions ?? {}).not.toHaveProperty([uiExtension]);
    expect(readFileSync(join(environment.dirs.cache, 'nteract-mcp', 'tool-cache.json'), 'utf8')).not.toContain(
      uiExtension,
    );
    await proxy.stop();
  });
});

/**
 * One scripted session of a client that declares no extension, on raw stdio lines, in a fresh
 * user environment (`env` added): initialize (legacy) or the enveloped requests (native), then
 * tools/list, resources/list, create_notebook, create_cell and_run, execute_cell, get_cell. The
 * answers as the proxy wrote them (each line's text), in order, with what differs between any two runs
 * (ids, times, durations, paths, pids, ports) replaced by placeholders.
 */
async function scriptedAnswers(era: 'legacy' | 'native', env: Readonly<Record<string, string>>): Promise<string[]> {
  const environment: UserEnvironment = createUserEnvironment(shippedBins.runtimed, { env });
  const proxy = startRawProxy(environment);
  stops.push(async () => {
    await proxy.stop();
    await environment.cleanup();
  });
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'text-only', version: '1' },
  };
  const answers: string[] = [];
  let nextId = 1;
  const request = async (method: string, params: Record<string, unknown> = {}): Promise<RawLine> => {
    const id = nextId++;
    proxy.send({ jsonrpc: '2.0', id, method, params: era === 'native' ? { ...params, _meta: envelope } : params });
    const { line } = await proxy.answer(id);
    answers.push(proxy.answerText(id) ?? '');
    return line;
  };
  if (era === 'legacy') {
    await request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'text-only', version: '1' },
    });
    proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  } else {
    await request('server/discover');
  }
  await request('tools/list');
  await request('resources/list');
  const call = (name: string, args: Record<string, unknown>) => request('tools/call', { name, arguments: args });
  await call('create_notebook', {});
  const created = await call('create_cell', { source: "print('\\x1b[31mred\\x1b[0m', 6 * 7)", and_run: true });
  const text = ((created.result?.content ?? []) as { text?: string }[])[0]?.text ?? '{}';
  const cellId = (JSON.parse(text) as { cell_id?: string }).cell_id;
  expect(cellId, text).toBeDefined();
  await call('execute_cell', { cell_id: cellId });
  await call('get_cell', { cell_id: cellId });
  const root = environment.dirs.root;
  return answers.map((text) =>
    text
      .replaceAll(root, '<root>')
      .replaceAll(cellId as string, '<cell>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/"(\w*(?:_ms|Ms|_at|At|pid|port|elapsed\w*|duration\w*|started\w*|uptime\w*))":\d+(\.\d+)?/g, '"$1":<n>')
      .replace(/agent:[\w-]+:[0-9a-f]+/g, 'agent:<session>')
      .replace(/"changeCursor":"[0-9a-f]+\./g, '"changeCursor":"<cursor>.')
      .replace(/\b\d+(\.\d+)? ?(ms|s)\b/g, '<n> $2')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
      .replace(/\b[0-9a-f]{16,}\b/g, '<hex>'),
  );
}

describe('a client that does not declare the extension', () => {
  for (const era of ['legacy', 'native'] as const) {
    it(`gets the answers it gets with the view left out of the bins, byte for byte (${era} era)`, {
      timeout: 300_000,
    }, async () => {
      const [without, withView] = await Promise.all([
        scriptedAnswers(era, { NTERACT_MCP_APP_VIEW: 'off' }),
        scriptedAnswers(era, {}),
      ]);
      expect(withView).toHaveLength(7);
      for (const [index, line] of withView.entries()) expect(line, `answer ${index + 1}`).toBe(without[index]);
      // The check can fail: the view is what a declaring client is shown, and nothing of it here.
      expect(withView.join('\n')).not.toMatch(/ui:\/\/|structuredContent|io\.modelcontextprotocol\/ui/);
      expect(withView[1]).toContain('"create_cell"');
    });
  }
});
