import { HostChannel } from './host-channel.js';
import { element, type Output, renderMarkdown, renderOutput } from './render-output.js';

/** What the server's `structuredContent` holds (see view-content.ts). */
interface ViewCell {
  readonly id: string;
  readonly cellType: string;
  readonly source: string;
  readonly executionCount: number | null;
  readonly status?: string;
  readonly outputs: readonly Output[];
  readonly omittedOutputs: number;
}
interface ViewContent {
  readonly view: 'nteract-cells';
  readonly notebookId?: string;
  readonly liveView?: string;
  readonly cells: readonly ViewCell[];
  readonly scratch?: { readonly status?: string; readonly outputs: readonly Output[] };
  readonly error?: string;
}

/** The MCP Apps protocol revision the view speaks. */
const protocolVersion = '2026-01-26';

const channel = new HostChannel(window.parent);
const root = element('main', 'view');
document.body.append(root);

let content: ViewContent | undefined;
/** Cells with a call of the view's own under way, and the last error of a cell's call. */
const busy = new Set<string>();
const failures = new Map<string, string>();

function isViewContent(value: unknown): value is ViewContent {
  return typeof value === 'object' && value !== null && (value as { view?: unknown }).view === 'nteract-cells';
}

/** Takes a tool result: its cells replace the ones shown of the same id, new ones are added. */
function take(result: Record<string, unknown>): void {
  const structured = result.structuredContent;
  if (!isViewContent(structured)) {
    if (result.isError === true)
      content = { view: 'nteract-cells', cells: content?.cells ?? [], error: textOf(result) };
    render();
    return;
  }
  if (content === undefined || structured.cells.length === 0) content = structured;
  else {
    const incoming = new Map(structured.cells.map((cell) => [cell.id, cell]));
    const kept = content.cells.map((cell) => incoming.get(cell.id) ?? cell);
    const added = structured.cells.filter((cell) => !content?.cells.some((shown) => shown.id === cell.id));
    content = { ...content, ...structured, cells: [...kept, ...added] };
  }
  render();
}

function textOf(result: Record<string, unknown>): string {
  const items = Array.isArray(result.content) ? result.content : [];
  const text = items.find((item: { type?: unknown }) => item.type === 'text') as { text?: string } | undefined;
  return text?.text ?? 'The call failed.';
}

/** Calls one of the server's tools through the host (the person clicked), for `cellId`. */
async function callTool(cellId: string, name: string, args: Record<string, unknown>): Promise<void> {
  busy.add(cellId);
  failures.delete(cellId);
  render();
  try {
    const result = (await channel.request('tools/call', { name, arguments: args })) as Record<string, unknown>;
    if (result.isError === true) failures.set(cellId, textOf(result));
    busy.delete(cellId);
    take(result);
  } catch (error) {
    busy.delete(cellId);
    failures.set(cellId, error instanceof Error ? error.message : String(error));
    render();
  }
}

/**
 * The person asked for the live page: a one-time address from `show_notebook` (through the host,
 * on this click), opened through the host (`ui/open-link`).
 */
async function openLivePage(notebookId: string): Promise<void> {
  try {
    const result = (await channel.request('tools/call', {
      name: 'show_notebook',
      arguments: { notebook_id: notebookId },
    })) as Record<string, unknown>;
    const url = /^https?:\/\/\S+/.exec(textOf(result))?.[0];
    if (result.isError === true || url === undefined) throw new Error(textOf(result));
    await channel.request('ui/open-link', { url });
  } catch (error) {
    content = {
      ...(content ?? { view: 'nteract-cells', cells: [] }),
      error: error instanceof Error ? error.message : String(error),
    };
    render();
  }
}

function statusOf(cell: ViewCell): string {
  if (busy.has(cell.id)) return 'running';
  if (cell.status !== undefined) return cell.status;
  return cell.outputs.some((output) => output.output_type === 'error') ? 'error' : 'idle';
}

function renderCell(cell: ViewCell): HTMLElement {
  const status = statusOf(cell);
  const count = element('span', 'execution-count', cell.cellType === 'code' ? `[${cell.executionCount ?? ' '}]` : '');
  const badge = element('span', `status status-${status}`, status);
  const actions = element('span', 'actions');
  if (cell.cellType === 'code') {
    const rerun = element('button', 'rerun', busy.has(cell.id) ? 'Running…' : 'Re-run') as HTMLButtonElement;
    rerun.disabled = busy.has(cell.id);
    rerun.title = 'Run this cell again (execute_cell)';
    rerun.addEventListener('click', () => void callTool(cell.id, 'execute_cell', { cell_id: cell.id }));
    actions.append(rerun);
  }
  if (cell.omittedOutputs > 0) {
    const more = element('button', 'more', `Show ${cell.omittedOutputs} more outputs`) as HTMLButtonElement;
    more.disabled = busy.has(cell.id);
    more.addEventListener(
      'click',
      () => void callTool(cell.id, 'get_cell', { cell_id: cell.id, offset: 0, length: 2000 }),
    );
    actions.append(more);
  }
  // A cell that does not run has no run state.
  const parts =
    cell.cellType === 'code'
      ? [count, element('code', 'cell-id', cell.id), badge]
      : [element('code', 'cell-id', cell.id)];
  const header = element('header', 'cell-header', ...parts, actions);
  const source =
    cell.cellType === 'markdown' ? renderMarkdown(cell.source) : element('pre', 'source', cell.source || ' ');
  const node = element('section', `cell cell-${cell.cellType}`, header, source);
  node.dataset.cellId = cell.id;
  node.dataset.status = status;
  if (cell.outputs.length > 0) node.append(element('div', 'outputs', ...cell.outputs.map(renderOutput)));
  const failure = failures.get(cell.id);
  if (failure !== undefined) node.append(element('div', 'call-error', failure));
  return node;
}

function render(): void {
  root.replaceChildren();
  const bar = element('nav', 'bar', element('strong', 'brand', 'nteract'));
  if (content?.notebookId !== undefined) bar.append(element('span', 'notebook', content.notebookId.slice(0, 8)));
  const notebookId = content?.notebookId;
  if (content?.liveView !== undefined && notebookId !== undefined) {
    const open = element('button', 'open-live', 'Open the live page') as HTMLButtonElement;
    open.title = content.liveView;
    open.addEventListener('click', () => void openLivePage(notebookId));
    bar.append(open);
  }
  root.append(bar);
  if (content === undefined) {
    root.append(element('p', 'note', 'Waiting for the tool’s result…'));
    return;
  }
  if (content.error !== undefined) root.append(element('div', 'call-error', content.error));
  for (const cell of content.cells) root.append(renderCell(cell));
  if (content.scratch !== undefined) {
    const status = content.scratch.status ?? 'done';
    const header = element(
      'header',
      'cell-header',
      element('span', 'execution-count', 'scratch'),
      element('span', `status status-${status}`, status),
    );
    root.append(
      element(
        'section',
        'cell scratch',
        header,
        element('div', 'outputs', ...content.scratch.outputs.map(renderOutput)),
      ),
    );
  }
}

/** The host's theme and style variables, applied to the document. */
function applyHostContext(context: Record<string, unknown>): void {
  const theme = context.theme;
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  const variables = (context.styles as { variables?: Record<string, unknown> } | undefined)?.variables ?? {};
  for (const [name, value] of Object.entries(variables)) {
    if (name.startsWith('--') && typeof value === 'string') document.documentElement.style.setProperty(name, value);
  }
}

/** Tells the host the size the view needs, whenever it changes. */
function reportSize(): void {
  let last = '';
  const send = () => {
    const width = Math.ceil(document.documentElement.scrollWidth);
    const height = Math.ceil(document.documentElement.scrollHeight);
    const size = `${width}x${height}`;
    if (size === last) return;
    last = size;
    channel.notify('ui/notifications/size-changed', { width, height });
  };
  new ResizeObserver(send).observe(document.body);
  send();
}

// Links in rendered Markdown open through the host, never in the sandbox.
document.addEventListener('click', (event) => {
  const link = (event.target as HTMLElement | null)?.closest?.('a[data-external]');
  if (!link) return;
  event.preventDefault();
  void channel.request('ui/open-link', { url: (link as HTMLAnchorElement).href }).catch(() => undefined);
});

channel.on('ui/notifications/tool-result', (params) => take(params));
channel.on('ui/notifications/host-context-changed', (params) => applyHostContext(params));
render();
void channel
  .request('ui/initialize', {
    protocolVersion,
    appInfo: { name: 'nteract-cells', version: '0.1.0' },
    appCapabilities: {},
  })
  .then((answer) => {
    applyHostContext(
      ((answer as { hostContext?: Record<string, unknown> }).hostContext ?? {}) as Record<string, unknown>,
    );
    channel.notify('ui/notifications/initialized');
    reportSize();
  });
