import { describe, expect, it } from 'vitest';
import type { NbformatOutput as CellOutput } from './nbformat-output.js';
import { htmlConversionLimit, representOutputs } from './represent-output.js';

const rich = (data: Record<string, unknown>): CellOutput => ({ output_type: 'display_data', data, metadata: {} });

describe(representOutputs, () => {
  it('follows the documented preference: markdown, latex, html as Markdown, svg, json, plain', () => {
    const [markdown, latex, html, svg, json, plain] = representOutputs([
      rich({ 'text/markdown': '# T', 'text/latex': '$x$', 'text/plain': 'p' }),
      rich({ 'text/latex': '$x^2$', 'text/html': '<i>x</i>', 'text/plain': 'p' }),
      rich({ 'text/html': ['<b>bo', 'ld</b>'], 'text/plain': '<IPython.core.display.HTML object>' }),
      rich({ 'image/svg+xml': '<svg/>', 'application/json': { a: 1 }, 'text/plain': 'p' }),
      rich({ 'application/json': { a: [1, 2] }, 'text/plain': 'p' }),
      rich({ 'text/plain': ['4', '2'], 'application/vnd.custom+json': {} }),
    ]);
    expect(markdown).toMatchObject({
      mimeType: 'text/markdown',
      text: '# T',
      otherMimeTypes: ['text/latex', 'text/plain'],
    });
    expect(latex).toMatchObject({ mimeType: 'text/latex', text: '$x^2$' });
    expect(html).toMatchObject({ mimeType: 'text/html', text: '**bold**', otherMimeTypes: ['text/plain'] });
    expect(svg).toMatchObject({ mimeType: 'image/svg+xml', text: '<svg/>' });
    expect(json).toMatchObject({ mimeType: 'application/json', text: '{\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(plain).toMatchObject({
      mimeType: 'text/plain',
      text: '42',
      otherMimeTypes: ['application/vnd.custom+json'],
    });
  });

  it('keeps a DataFrame-like HTML table and script-only HTML for their plain text', () => {
    const [table, widget] = representOutputs([
      rich({ 'text/html': '<table><tr><td>1</td></tr></table>', 'text/plain': '   a\n0  1' }),
      rich({ 'text/html': '<script>render()</script>', 'text/plain': 'Widget()' }),
    ]);
    expect(table).toMatchObject({ mimeType: 'text/plain', text: '   a\n0  1' });
    expect(widget).toMatchObject({ mimeType: 'text/plain', text: 'Widget()' });
  });

  it('does not convert HTML over the conversion limit: its plain text when there is one, else its source', () => {
    const long = `<p>${'x'.repeat(htmlConversionLimit)}</p>`;
    const [withPlain, alone] = representOutputs([
      rich({ 'text/html': long, 'text/plain': 'P' }),
      rich({ 'text/html': long }),
    ]);
    expect(withPlain).toMatchObject({ mimeType: 'text/plain', text: 'P' });
    expect(alone).toMatchObject({ mimeType: 'text/html', text: long });
  });

  it('takes the first raster image, its whitespace removed, with the plain text as alt text', () => {
    const [figure] = representOutputs([
      {
        output_type: 'execute_result',
        data: { 'image/jpeg': 'AAA', 'image/png': 'iVBO\nRw0K\n', 'text/plain': '<Figure size 640x480>' },
      },
    ]);
    expect(figure).toEqual({
      outputType: 'execute_result',
      mimeType: 'text/plain',
      text: '<Figure size 640x480>',
      image: { mimeType: 'image/png', base64: 'iVBORw0K' },
      otherMimeTypes: ['image/jpeg'],
    });
  });

  it('joins consecutive streams of one name and strips colours from tracebacks', () => {
    const esc = String.fromCharCode(27);
    expect(
      representOutputs([
        { output_type: 'stream', name: 'stdout', text: 'a\n' },
        { output_type: 'stream', name: 'stdout', text: ['b', '\n'] },
        { output_type: 'stream', name: 'stderr', text: 'warn\n' },
        { output_type: 'stream', name: 'stdout', text: 'c\n' },
        { output_type: 'error', ename: 'E', evalue: 'v', traceback: [`${esc}[31mE${esc}[0m: v`, 'line'] },
      ]),
    ).toEqual([
      { outputType: 'stream', name: 'stdout', text: 'a\nb\n' },
      { outputType: 'stream', name: 'stderr', text: 'warn\n' },
      { outputType: 'stream', name: 'stdout', text: 'c\n' },
      { outputType: 'error', ename: 'E', evalue: 'v', text: 'E: v\nline' },
    ]);
  });
});
