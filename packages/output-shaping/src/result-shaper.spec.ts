import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import type { NbformatOutput as CellOutput } from './nbformat-output.js';
import { defaultOutputLimits } from './output-limits.js';
import { OutputsDocument } from './outputs-document.js';
import { ResultShaper } from './result-shaper.js';

const readMore = (offset: number): string => `get_results(execution_id="e1", offset=${offset})`;

function figure(width: number, height: number): CellOutput {
  const png = new PNG({ width, height });
  png.data.fill(200);
  return {
    output_type: 'display_data',
    data: { 'image/png': PNG.sync.write(png).toString('base64'), 'text/plain': `<Figure size ${width}x${height}>` },
    metadata: {},
  };
}

describe(ResultShaper, () => {
  it('puts images in content items named by the output, and describes them only with images off', () => {
    const shaper = new ResultShaper();
    const outputs = shaper.shapeOutputs([figure(64, 48), figure(32, 32)], readMore);
    expect(outputs).toEqual([
      {
        output_type: 'display_data',
        mime_type: 'text/plain',
        text: '<Figure size 64x48>',
        image: { mime_type: 'image/png', width: 64, height: 48, content_index: 1 },
      },
      expect.objectContaining({ image: { mime_type: 'image/png', width: 32, height: 32, content_index: 2 } }),
    ]);
    const result = shaper.result({ outputs });
    expect(result.content.map((item) => item.type)).toEqual(['text', 'image', 'image']);
    const [, first] = result.content;
    expect(first?.type === 'image' && PNG.sync.read(Buffer.from(first.data, 'base64')).width).toBe(64);

    const off = new ResultShaper({ images: false });
    const [described] = off.shapeOutputs([figure(64, 48)], readMore);
    expect(described?.image).toEqual({
      mime_type: 'image/png',
      not_shown: expect.stringMatching(/image not shown: images are off for this call \(images=false\)\.$/),
    });
    expect(off.result({}).content).toHaveLength(1);
  });

  it('stops adding images at the count and the byte bounds of one result', () => {
    const shaper = new ResultShaper({ limits: { ...defaultOutputLimits, resultImages: 1 } });
    const [, second] = shaper.shapeOutputs([figure(8, 8), figure(8, 8)], readMore);
    expect(second?.image?.not_shown).toMatch(/this result already carries 1 images; read this cell alone/);
    const small = new ResultShaper({ resultBudgetBytes: 100 });
    const [only] = small.shapeOutputs([figure(8, 8)], readMore);
    expect(only?.image?.not_shown).toMatch(/is over the bound of one image/);
  });

  it('keeps head and tail of a long output and names the offset where the cut starts', () => {
    const text = Array.from({ length: 100_000 }, (_, n) => `line ${n}`).join('\n');
    const outputs: CellOutput[] = [{ output_type: 'stream', name: 'stdout', text }];
    const [shaped] = new ResultShaper().shapeOutputs(outputs, readMore);
    const shown = shaped?.text ?? '';
    expect(shown.startsWith('line 0\nline 1\n')).toBe(true);
    expect(shown.endsWith('line 99998\nline 99999')).toBe(true);
    expect(shown.length).toBeLessThan(defaultOutputLimits.outputChars + 200);
    const [, cutChars, offset] =
      /\n… \[(\d+) characters \(\d+ line breaks\) cut here; read them with get_results\(execution_id="e1", offset=(\d+)\)\] …\n/.exec(
        shown,
      ) ?? [];
    const document = new OutputsDocument(outputs);
    const head = shown.slice(0, shown.indexOf('\n… ['));
    expect(document.text.slice(Number(offset) - head.length, Number(offset))).toBe(head);
    expect(document.page(Number(offset), Number(cutChars), 8 * 1024 * 1024)?.text).toBe(
      text.slice(head.length, head.length + Number(cutChars)),
    );
  });

  it('shows the first and the last outputs of many, with one line for the rest', () => {
    const outputs: CellOutput[] = Array.from({ length: 300 }, (_, n) => ({
      output_type: 'display_data',
      data: { 'text/plain': String(n) },
    }));
    const shaped = new ResultShaper().shapeOutputs(outputs, readMore);
    expect(shaped).toHaveLength(51);
    expect(shaped.slice(0, 40).map((output) => output.text)).toEqual(Array.from({ length: 40 }, (_, n) => String(n)));
    expect(shaped.slice(41).map((output) => output.text)).toEqual(
      Array.from({ length: 10 }, (_, n) => String(290 + n)),
    );
    const offset = new OutputsDocument(outputs).headerStart(40);
    expect(shaped[40]).toEqual({
      output_type: 'omitted',
      summary: `250 outputs not shown (outputs 41–290 of 300: 250 display_data; 690 characters): one result shows the first 40 and the last 10 outputs of a cell. Read them with get_results(execution_id="e1", offset=${offset}).`,
    });
  });

  it('keeps the output text of one result within its cap, over several cells, says what it left out, and keeps each last output', () => {
    const shaper = new ResultShaper({ limits: { ...defaultOutputLimits, resultChars: 8000 } });
    const cell = (): CellOutput[] => [
      { output_type: 'stream', name: 'stdout', text: 'a'.repeat(5000) },
      { output_type: 'error', ename: 'ValueError', evalue: 'bad', traceback: ['b'.repeat(5000)] },
    ];
    const first = shaper.shapeOutputs(cell(), readMore);
    const second = shaper.shapeOutputs(cell(), readMore);
    expect(first.map((output) => output.output_type)).toEqual(['stream', 'error']);
    expect(first[1]?.traceback).toMatch(/cut here/);
    // The last output of a cell (the error here) is shown even when the text of the result is spent.
    expect(second).toEqual([
      {
        output_type: 'omitted',
        summary:
          '1 output not shown (output 1 of 2: 1 stream; 5000 characters): one result shows at most 8000 characters of output text. Read it with get_results(execution_id="e1", offset=0).',
      },
      {
        output_type: 'error',
        ename: 'ValueError',
        evalue: 'bad',
        traceback: expect.stringMatching(
          /^b{100,}\n… \[\d+ characters \(0 line breaks\) cut here; read them with get_results\(execution_id="e1", offset=\d+\)\] …\nb{100,}$/,
        ),
      },
    ]);
  });
});
