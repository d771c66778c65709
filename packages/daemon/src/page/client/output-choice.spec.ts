import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { outputChoice } from './output-choice.js';

const display = (data: Record<string, unknown>, metadata: Record<string, unknown> = {}): WireOutput => ({
  output_type: 'display_data',
  data,
  metadata,
});
const reference = (url: string, hash: string) => ({ runtimed_output_ref: url, hash });

describe(outputChoice, () => {
  it('draws a stream as its text joined from nbformat lines, stdout when it names no stream', () => {
    expect(outputChoice({ output_type: 'stream', name: 'stderr', text: ['a\n', 'b'] })).toEqual({
      as: 'stream',
      name: 'stderr',
      text: 'a\nb',
    });
    expect(outputChoice({ output_type: 'stream', text: 'x' } as WireOutput)).toMatchObject({ name: 'stdout' });
  });

  it('draws an error as its traceback, or its name and value when it has none', () => {
    expect(outputChoice({ output_type: 'error', ename: 'E', evalue: 'v', traceback: ['line 1', 'line 2'] })).toEqual({
      as: 'error',
      text: 'line 1\nline 2',
    });
    expect(outputChoice({ output_type: 'error', ename: 'KeyError', evalue: "'k'", traceback: [] })).toEqual({
      as: 'error',
      text: "KeyError: 'k'",
    });
  });

  it('picks the best MIME type as a Jupyter front end ranks them', () => {
    expect(outputChoice(display({ 'text/plain': '<Figure>', 'image/png': 'AAAA' }))).toMatchObject({ as: 'image' });
    expect(outputChoice(display({ 'text/plain': 'df', 'text/html': '<table/>' }))).toMatchObject({ as: 'frame' });
    expect(outputChoice(display({ 'text/plain': 'x', 'text/markdown': '**x**' }))).toMatchObject({
      as: 'markdown',
      text: { inline: '**x**' },
    });
    expect(outputChoice(display({ 'text/plain': 'x', 'text/latex': '$x$' }))).toMatchObject({ as: 'latex' });
    expect(outputChoice(display({ 'text/plain': 'x', 'application/json': { a: [1] } }))).toEqual({
      as: 'json',
      kind: 'display',
      json: '{\n  "a": [\n    1\n  ]\n}',
    });
    expect(outputChoice(display({ 'application/x-unknown': 'x' }))).toEqual({
      as: 'text',
      kind: 'display',
      text: { inline: '' },
    });
  });

  it('classes an execute_result as a result and any other rich output as a display', () => {
    const result: WireOutput = { output_type: 'execute_result', execution_count: 2, data: { 'text/plain': '3' } };
    expect(outputChoice(result)).toEqual({ as: 'text', kind: 'result', text: { inline: '3' } });
    expect(outputChoice(display({ 'text/plain': '3' }))).toMatchObject({ kind: 'display' });
  });

  it('shows an inline image as a data URL without the base64 line breaks, sized by its metadata', () => {
    expect(
      outputChoice(display({ 'image/png': 'iVBO\nRw0K\n' }, { 'image/png': { width: 320.4, height: 240 } })),
    ).toEqual({
      as: 'image',
      kind: 'display',
      mime: 'image/png',
      src: 'data:image/png;base64,iVBORw0K',
      width: 320,
      height: 240,
    });
    // The size may stand at the metadata's top; a size that is not a positive number is not one.
    expect(outputChoice(display({ 'image/jpeg': '/9j/' }, { width: 100, height: 0 }))).toEqual({
      as: 'image',
      kind: 'display',
      mime: 'image/jpeg',
      src: 'data:image/jpeg;base64,/9j/',
      width: 100,
    });
  });

  it('reads a value sent by reference from its URL: an image’s src, a text’s content, a frame versioned by its hash', () => {
    expect(outputChoice(display({ 'image/png': reference('/o/abc', 'abc') }))).toMatchObject({
      as: 'image',
      src: '/o/abc',
    });
    expect(outputChoice(display({ 'text/html': reference('/o/h1', 'h1') }))).toEqual({
      as: 'frame',
      mime: 'text/html',
      version: 'h1',
    });
    expect(outputChoice(display({ 'text/plain': reference('/o/t', 't') }))).toEqual({
      as: 'text',
      kind: 'display',
      text: { url: '/o/t' },
    });
    expect(outputChoice(display({ 'text/markdown': reference('/o/m', 'm') }))).toMatchObject({
      as: 'markdown',
      text: { url: '/o/m' },
    });
    // JSON sent by reference is shown as the text it is read as (it is not parsed again).
    expect(outputChoice(display({ 'application/json': reference('/o/j', 'j') }))).toMatchObject({
      as: 'text',
      text: { url: '/o/j' },
    });
  });

  it('versions an inline frame by its content: the same HTML the same version, other HTML another', () => {
    const version = (html: string) => (outputChoice(display({ 'text/html': html })) as { version: string }).version;
    expect(version('<b>1</b>')).toBe(version('<b>1</b>'));
    expect(version('<b>1</b>')).not.toBe(version('<b>2</b>'));
    expect(version(['<b>', '1</b>'] as unknown as string)).toBe(version('<b>1</b>'));
  });
});
