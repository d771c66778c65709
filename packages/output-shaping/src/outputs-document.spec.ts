import { describe, expect, it } from 'vitest';
import { OutputsDocument } from './outputs-document.js';

describe(OutputsDocument, () => {
  const document = new OutputsDocument([
    { output_type: 'stream', name: 'stdout', text: 'hello\n' },
    { output_type: 'display_data', data: { 'text/html': '<b>bold</b>', 'image/png': 'iVBO', 'text/plain': 'x' } },
    { output_type: 'error', ename: 'NameError', evalue: "name 'y' is not defined", traceback: ['tb'] },
  ]);

  it('is every output whole, each after a header line, with offsets of headers and bodies', () => {
    expect(document.text).toBe(
      [
        '── output 1 of 3: stream stdout',
        'hello',
        '── output 2 of 3: display_data text/html, image/png',
        '**bold**',
        "── output 3 of 3: error NameError: name 'y' is not defined",
        'tb',
        '',
      ].join('\n'),
    );
    expect(document.text.slice(document.bodyStart(1)).startsWith('**bold**')).toBe(true);
    expect(document.text.slice(document.headerStart(2)).startsWith('── output 3 of 3')).toBe(true);
  });

  it('pages from an offset, says where the next page starts, and has no page past the end', () => {
    const total = document.text.length;
    expect(document.page(0, 10, 1_000_000)).toEqual({
      offset: 0,
      length: 10,
      total_chars: total,
      next_offset: 10,
      text: document.text.slice(0, 10),
    });
    expect(document.page(10, 1_000_000, 1_000_000)).toEqual({
      offset: 10,
      length: total - 10,
      total_chars: total,
      text: document.text.slice(10),
    });
    expect(document.page(total, 5, 1_000_000)).toMatchObject({ length: 0, text: '' });
    expect(document.page(total + 1, 5, 1_000_000)).toBeUndefined();
  });

  it('shortens a page to its byte budget, counting the double escaping of quotes and line breaks', () => {
    const escaped = new OutputsDocument([{ output_type: 'stream', name: 'stdout', text: '"\n'.repeat(100_000) }]);
    const page = escaped.page(0, 1_000_000, 50_000) as NonNullable<ReturnType<typeof escaped.page>>;
    expect(Buffer.byteLength(JSON.stringify(JSON.stringify(page.text)))).toBeLessThanOrEqual(50_000);
    expect(page.length).toBeGreaterThan(5000);
    expect(page.next_offset).toBe(page.length);
    expect(page.note).toMatch(/^Shortened to \d+ characters to fit the limit of one tool result/);
  });
});
