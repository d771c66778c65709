import { describe, expect, it } from 'vitest';
import { defineToken } from './define-token.js';

describe(defineToken, () => {
  it('mints a namespaced global symbol, the same for every copy that declares it', () => {
    const token = defineToken<{ a: 1 }>('acme-plugin', 'Widget');
    expect(token).toBe(Symbol.for('@nteract-mcp/acme-plugin/Widget'));
    expect(defineToken('acme-plugin', 'Widget')).toBe(token);
  });

  it('keeps tokens of different packages apart', () => {
    expect(defineToken('a', 'Options')).not.toBe(defineToken('b', 'Options'));
  });
});
