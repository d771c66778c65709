import { describe, expect, it } from 'vitest';
import { sniffTopLevelId, sniffTrailingId } from './sniff-top-level-id.js';

describe(sniffTopLevelId, () => {
  it('reads the top-level id from the start of a cut object, skipping nested ids', () => {
    expect(sniffTopLevelId('{"jsonrpc":"2.0","id":7,"params":{"s":"xx')).toBe(7);
    expect(sniffTopLevelId('{"params":{"id":1},"id":"a-1","s":"x')).toBe('a-1');
    expect(sniffTopLevelId('{"params":{"id":1,"s":"xxx')).toBeNull();
    expect(sniffTopLevelId('{"id":12')).toBeNull();
  });
});

describe(sniffTrailingId, () => {
  it('reads the id written last (the MCP SDK shape) from the end of a cut object', () => {
    expect(sniffTrailingId('xxxx"}]},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(sniffTrailingId('xxxx"}]},"jsonrpc":"2.0","id":"r-\\"9\\""}\r')).toBe('r-"9"');
    expect(sniffTrailingId('x","id":-3.5e2}  ')).toBe(-350);
  });

  it('does not take the id of a nested object or one inside a string', () => {
    expect(sniffTrailingId('xx","cell":{"id":3}}')).toBeNull();
    expect(sniffTrailingId('xx\\",\\"id\\":5}"}')).toBeNull();
    expect(sniffTrailingId('xx","id":5')).toBeNull();
  });
});
