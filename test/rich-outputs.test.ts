import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

/**
 * What an agent sees of a notebook's outputs, on the user path: the shipped proxy in a fresh HOME,
 * nothing pre-started (the child auto-starts the daemon), a real ipykernel (Debian
 * /usr/bin/python3, with Debian python3-matplotlib), the MCP SDK client (10 MiB read buffer).
 */

const clientBufferBytes = 10 * 1024 * 1024;

interface Answer {
  readonly json: Record<string, unknown>;
  readonly images: { readonly data: string; readonly mimeType: string }[];
  /** Bytes of the result as serialized; its JSON-RPC line is this plus the envelope. */
  readonly bytes: number;
  readonly progress: Progress[];
}

let session: UserSession;

beforeAll(async () => {
  session = await startUserSession();
  const created = await session.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
}, 180_000);

afterAll(async () => {
  await session?.stop();
});

/** One tool call with a progress token; the result taken apart. */
async function call(name: string, args: Record<string, unknown>): Promise<Answer> {
  const progress: Progress[] = [];
  const raw = await session.client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout: 240_000,
    onprogress: (notification) => progress.push(notification),
  });
  const content = raw.content as { type: string; text?: string; data?: string; mimeType?: string }[];
  const [first] = content;
  expect(first?.type).toBe('text');
  expect(raw.isError, first?.text?.slice(0, 2000)).toBeFalsy();
  return {
    json: JSON.parse(first?.text ?? '') as Record<string, unknown>,
    images: content
      .filter((item) => item.type === 'image')
      .map((item) => ({ data: String(item.data), mimeType: String(item.mimeType) })),
    bytes: Buffer.byteLength(JSON.stringify(raw)),
    progress,
  };
}

/** Runs `source` in a new cell once the kernel answers (a notebook's kernel may still be starting). */
async function runCell(source: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  const created = await session.call('create_cell', { source });
  expect(created.isError, created.text).toBe(false);
  const cellId = String(created.json?.cell_id);
  // Refused (isError) while the kernel starts; the first run that is not refused is the answer.
  return waitFor(
    'the kernel to run the cell',
    () => call('execute_cell', { cell_id: cellId, timeout_secs: 180, ...extra }),
    { timeoutMs: 180_000, intervalMs: 250 },
  );
}

type Output = {
  output_type: string;
  text?: string;
  mime_type?: string;
  summary?: string;
  image?: Record<string, unknown>;
};

describe('rich and large outputs through the shipped proxy (real kernel, auto-started daemon)', () => {
  it("returns a plot as an MCP image whose bytes decode as a PNG of the figure's size; images=false describes it only", {
    timeout: 240_000,
  }, async () => {
    const source = [
      "%config InlineBackend.print_figure_kwargs = {'bbox_inches': None}",
      'import matplotlib.pyplot as plt',
      'fig = plt.figure(figsize=(4, 3), dpi=100)',
      'plt.plot([1, 2, 3], [1, 4, 9])',
      'w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)',
      "print(f'size {w} {h}')",
      'plt.show()',
    ].join('\n');
    const answer = await runCell(source);
    expect(answer.json.status).toBe('done');
    const outputs = answer.json.outputs as Output[];
    const size = /size (\d+) (\d+)/.exec(outputs.map((output) => output.text ?? '').join('\n'));
    expect(size).not.toBeNull();
    const [width, height] = [Number(size?.[1]), Number(size?.[2])];
    expect([width, height]).toEqual([400, 300]);
    const plot = outputs.find((output) => output.image !== undefined);
    expect(plot?.image).toEqual({ mime_type: 'image/png', width, height, content_index: 1 });
    expect(answer.images).toHaveLength(1);
    expect(answer.images[0]?.mimeType).toBe('image/png');
    const png = PNG.sync.read(Buffer.from(answer.images[0]?.data ?? '', 'base64'));
    expect([png.width, png.height]).toEqual([width, height]);

    const cellId = String(answer.json.cell_id);
    const again = await call('get_cell', { cell_id: cellId, images: false });
    expect(again.images).toEqual([]);
    const described = (again.json.outputs as Output[]).find((output) => output.image !== undefined);
    expect(described?.image?.not_shown).toMatch(/images are off for this call/);
    expect(described?.text).toMatch(/^<Figure size 400x300 with 1 Axes>$/);
  });

  it("returns IPython.display.HTML('<b>bold</b>') as the Markdown **bold**", { timeout: 240_000 }, async () => {
    const answer = await runCell("from IPython.display import HTML\nHTML('<b>bold</b>')");
    expect(answer.json.outputs).toEqual([
      { output_type: 'execute_result', mime_type: 'text/html', text: '**bold**', other_mime_types: ['text/plain'] },
    ]);
  });

  it('shows the first and last lines of a 5 MB output with the cut marked, and pages through it to the end', {
    timeout: 400_000,
  }, async () => {
    const lines = 400_000;
    const answer = await runCell(`print('\\n'.join(f'line {i:07d}' for i in range(${lines})))`);
    expect(answer.json.status).toBe('done');
    const [output] = answer.json.outputs as Output[];
    const text = output?.text ?? '';
    expect(text.startsWith('line 0000000\nline 0000001\n')).toBe(true);
    expect(text.endsWith(`line ${String(lines - 1).padStart(7, '0')}\n`)).toBe(true);
    const executionId = String(answer.json.execution_id);
    const marker = new RegExp(
      `\\n… \\[(\\d+) characters \\((\\d+) line breaks\\) cut here; read them with get_results\\(execution_id="${executionId}", offset=(\\d+)\\)\\] …\\n`,
    );
    expect(text).toMatch(marker);
    expect(answer.bytes).toBeLessThan(100_000);

    const expected = `── output 1 of 1: stream stdout\n${Array.from({ length: lines }, (_, i) => `line ${String(i).padStart(7, '0')}\n`).join('')}`;
    expect(expected.length).toBeGreaterThan(5_000_000);
    let read = '';
    let offset: number | undefined = 0;
    let pages = 0;
    while (offset !== undefined) {
      const page = await call('get_results', { execution_id: executionId, offset, length: 2_000_000 });
      expect(page.bytes).toBeLessThan(clientBufferBytes);
      const got = page.json.outputs_page as { text: string; total_chars: number; next_offset?: number };
      expect(got.total_chars).toBe(expected.length);
      read += got.text;
      offset = got.next_offset;
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(expected.length / 2_000_000));
    expect(read).toBe(expected);
    // The part the marker names starts where the head stopped.
    const [, , , cutAt] = marker.exec(text) ?? [];
    const atCut = await call('get_cell', { cell_id: String(answer.json.cell_id), offset: Number(cutAt), length: 13 });
    expect((atCut.json.outputs_page as { text: string }).text).toBe(expected.slice(Number(cutAt), Number(cutAt) + 13));
    // A length beyond one message is shortened to fit, and says so.
    const whole = await call('get_results', { execution_id: executionId, offset: 0, length: 100_000_000 });
    expect(whole.bytes).toBeLessThan(clientBufferBytes);
    expect((whole.json.outputs_page as { length: number }).length).toBe(expected.length);
  });

  it('caps 300 displays with a summary line, and coalesces their progress to a few notifications a second', {
    timeout: 240_000,
  }, async () => {
    await runCell('x = 1');
    const created = await session.call('create_cell', { source: 'for i in range(300):\n    display(i)' });
    const started = Date.now();
    const answer = await call('execute_cell', { cell_id: String(created.json?.cell_id), timeout_secs: 180 });
    const elapsedMs = Date.now() - started;
    expect(answer.json.status).toBe('done');
    const outputs = answer.json.outputs as Output[];
    expect(outputs).toHaveLength(51);
    expect(outputs.slice(0, 40).map((output) => output.text)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    expect(outputs.slice(41).map((output) => output.text)).toEqual(
      Array.from({ length: 10 }, (_, i) => String(290 + i)),
    );
    expect(outputs[40]).toEqual({
      output_type: 'omitted',
      summary: expect.stringMatching(
        /^250 outputs not shown \(outputs 41–290 of 300: 250 display_data; 690 characters\): one result shows the first 40 and the last 10 outputs of a cell\. Read them with get_results\(execution_id="[^"]+", offset=\d+\)\.$/,
      ),
    });
    // At most four a second: one per started 250 ms of the call at most, far fewer than 300.
    expect(answer.progress.length).toBeGreaterThanOrEqual(1);
    expect(answer.progress.length).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / 250));
    expect(answer.progress.length).toBeLessThan(300);
  });
});
