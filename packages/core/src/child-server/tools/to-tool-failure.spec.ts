import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CoreError } from '../../errors/core-error.js';
import { InvalidParamsError, ToolError, toToolFailure } from './to-tool-failure.js';

const wrap = (message: string): string => `Failed to do it: ${message}`;

describe(toToolFailure, () => {
  it('makes unusable arguments a tool error (SEP-1303), never invalid params, with the message as is', () => {
    for (const kind of ['invalidTarget', 'unsupportedTarget', 'cellNotFound'] as const) {
      const failure = toToolFailure(new CoreError(kind, `bad ${kind}`), { wrap });
      expect(failure).toBeInstanceOf(ToolError);
      expect(failure).not.toBeInstanceOf(McpError);
      expect(failure.message).toBe(`bad ${kind}`);
    }
  });

  it('keeps session and readiness texts verbatim, and wraps operation failures', () => {
    for (const kind of [
      'noSession',
      'runtimeNotReady',
      'documentNotReady',
      'localSyncFailed',
      'sourceDegraded',
      'supersededActivation',
    ] as const) {
      const failure = toToolFailure(new CoreError(kind, 'as is'), { wrap });
      expect(failure).toBeInstanceOf(ToolError);
      expect(failure.message).toBe('as is');
    }
    expect(toToolFailure(new CoreError('daemonUnavailable', 'down'), { wrap }).message).toBe('Failed to do it: down');
    expect(toToolFailure(new Error('plain'), { wrap }).message).toBe('Failed to do it: plain');
    expect(toToolFailure('text').message).toBe('text');
  });

  it("words the remote party's codes as told, and passes wire and tool errors through", () => {
    const taken = new CoreError('invalidRequest', 'Cannot save: taken', { code: 'path_already_open' });
    expect(toToolFailure(taken, { wrap, codes: { path_already_open: (m) => m } }).message).toBe('Cannot save: taken');
    const mcp = new McpError(ErrorCode.InternalError, 'x');
    expect(toToolFailure(mcp)).toBe(mcp);
    const invalid = new InvalidParamsError('z');
    expect(toToolFailure(invalid)).toBe(invalid);
    const tool = new ToolError('y');
    expect(toToolFailure(tool, { wrap })).toBe(tool);
  });
});
