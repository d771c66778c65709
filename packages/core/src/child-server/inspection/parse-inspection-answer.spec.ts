import { describe, expect, it } from 'vitest';
import type { ScratchRun } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';
import {
  fitEntries,
  memoryJson,
  parseInspectionAnswer,
  similarNames,
  type VariableEntry,
} from './parse-inspection-answer.js';

const marker = '\u001enteract-inspect-0123abcd:';

function printed(...texts: string[]): ScratchRun {
  return { status: 'ok', outputs: texts.map((text) => ({ output_type: 'stream', name: 'stdout', text })) };
}

function failure(run: ScratchRun): string {
  try {
    parseInspectionAnswer(run, marker);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error('expected a tool error');
}

describe('parseInspectionAnswer', () => {
  it('reads the line after the marker, among other output and across stream pieces', () => {
    const answer = { language: 'python', total: 1, entries: [{ name: 'x', type: 'int', repr: '42' }], memory: null };
    const line = `${marker}${JSON.stringify(answer)}\n`;
    const run = printed('a thread printed this\n', line.slice(0, 10), line.slice(10), 'and this after\n');
    expect(parseInspectionAnswer(run, marker)).toMatchObject({ total: 1, entries: [{ name: 'x', repr: '42' }] });
  });

  it('holds every string of an entry to a bound, whatever the kernel sent', () => {
    const entry = { name: 'big', type: 'str', repr: 'x'.repeat(100_000), rows: [['y'.repeat(50_000)]] };
    const parsed = parseInspectionAnswer(printed(`${marker}${JSON.stringify({ entries: [entry] })}\n`), marker);
    expect(parsed.entries?.[0]?.repr.length).toBe(4000);
    expect(parsed.entries?.[0]?.repr.endsWith('…')).toBe(true);
    expect(parsed.entries?.[0]?.rows?.[0]?.[0]?.length).toBe(4000);
  });

  it('says what went wrong: a failed or aborted run, no answer, bad JSON, a bad shape, the program’s own error', () => {
    expect(
      failure({
        status: 'error',
        outputs: [{ output_type: 'error', ename: 'KeyboardInterrupt', evalue: '', traceback: [] }],
      }),
    ).toContain('ended with KeyboardInterrupt: ');
    expect(failure({ status: 'aborted', outputs: [] })).toContain('ended aborted');
    expect(failure(printed('nothing of ours\n'))).toContain('printed no answer');
    expect(failure(printed(`${marker}{not json\n`))).toContain('not valid JSON');
    expect(failure(printed(`${marker}${JSON.stringify({ entries: [{ name: 1 }] })}\n`))).toContain('not as expected');
    expect(failure(printed(`${marker}${JSON.stringify({ error: 'NameError: boom' })}\n`))).toBe(
      "Listing the kernel's variables failed in the kernel: NameError: boom",
    );
  });
});

describe('fitEntries', () => {
  const entry = (name: string, size: number): VariableEntry => ({ name, type: 'str', repr: 'r'.repeat(size) });

  it('keeps the first entries that fit the budget, and always one', () => {
    const entries = Array.from({ length: 10 }, (_, index) => entry(`v${index}`, 1000));
    expect(fitEntries(entries, 3500).map((shown) => shown.name)).toEqual(['v0', 'v1', 'v2']);
    expect(fitEntries(entries, 1_000_000)).toHaveLength(10);
    expect(fitEntries([entry('huge', 100_000)], 1000)).toHaveLength(1);
    expect(fitEntries([], 1000)).toEqual([]);
  });
});

describe('similarNames', () => {
  it('finds names that differ in case, contain or are contained, or are a few edits away, nearest first', () => {
    const names = ['df', 'df2', 'data_frame', 'DF_clean', 'counter', 'x', 'totally_other'];
    expect(similarNames('dff', names)).toEqual(['df', 'df2']);
    expect(similarNames('Df', names)).toEqual(['df', 'DF_clean', 'df2']);
    expect(similarNames('countr', names)).toEqual(['counter']);
    // Two letters swapped are one edit.
    expect(similarNames('tabel', ['table', 'label', 'cable'])).toEqual(['label', 'table']);
    expect(similarNames('fmrae', ['frame'])).toEqual([]);
    expect(similarNames('zzz', names)).toEqual([]);
    expect(similarNames('x', ['x', 'y'])).toEqual(['y']);
  });

  it('gives at most the limit', () => {
    const names = Array.from({ length: 20 }, (_, index) => `value${index}`);
    expect(similarNames('value', names, 3)).toHaveLength(3);
  });
});

describe('memoryJson', () => {
  it('names the figure, in MiB too, and where it comes from; unknown otherwise', () => {
    expect(memoryJson({ rss_bytes: 104_857_600, source: 'psutil' })).toEqual({
      rss_bytes: 104_857_600,
      mib: 100,
      source: 'psutil',
    });
    expect(memoryJson({ used_bytes: 1_572_864, source: 'gc()' })).toMatchObject({ used_bytes: 1_572_864, mib: 1.5 });
    expect(memoryJson(null)).toBe('unknown');
    expect(memoryJson({ source: 'nothing' })).toBe('unknown');
  });
});
