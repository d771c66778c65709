import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { plainErrorMessage, withPlainErrorMessage } from './plain-error-message.js';

describe(plainErrorMessage, () => {
  it("takes off the prefix the MCP SDK's McpError writes into its message, however often it was wrapped", () => {
    expect(plainErrorMessage(new McpError(-32602, 'Task not found: t').message)).toBe('Task not found: t');
    expect(plainErrorMessage('MCP error -32602: MCP error -32021: Missing capability')).toBe('Missing capability');
    expect(plainErrorMessage('MCP error 7: x')).toBe('x');
  });

  it('leaves any other message as it is, a prefix-like text inside it included', () => {
    for (const message of ['Unknown tool: x', 'The MCP error -1: x', 'MCP error: x', 'MCP error -32602 x', '']) {
      expect(plainErrorMessage(message)).toBe(message);
    }
  });
});

describe(withPlainErrorMessage, () => {
  it('gives an error response with the plain message, code, data and id kept; the response itself when already plain', () => {
    const response = {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32002, message: 'MCP error -32002: Gone', data: { uri: 'u' } },
    };
    expect(withPlainErrorMessage(response)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32002, message: 'Gone', data: { uri: 'u' } },
    });
    expect(response.error.message).toBe('MCP error -32002: Gone');
    const plain = { jsonrpc: '2.0', id: 3, error: { code: -32002, message: 'Gone' } };
    expect(withPlainErrorMessage(plain)).toBe(plain);
    const result = { jsonrpc: '2.0', id: 3, result: {} };
    expect(withPlainErrorMessage(result)).toBe(result);
  });
});
