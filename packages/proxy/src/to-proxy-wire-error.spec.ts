import { CoreError } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { failureOfError, type ProxyFailure, toProxyWireError } from './to-proxy-wire-error.js';

describe(toProxyWireError, () => {
  it('gives every failure of the proxy a machine-readable data.kind', () => {
    const failures: ProxyFailure[] = [
      { kind: 'breaker_open', reason: 'open', lastExit: undefined, nextAttemptAt: undefined },
      { kind: 'child_unavailable', reason: 'gone' },
      { kind: 'outcome_unknown', method: 'tools/call', tool: 'create_cell' },
      { kind: 'too_large', limit: 10, stage: 'client', bytes: 20 },
      { kind: 'invalid_request', message: 'bad' },
      { kind: 'invalid_params', message: 'bad' },
      { kind: 'unreadable_line', code: -32700, message: 'Parse error' },
      { kind: 'tool_list_incompatible' },
      { kind: 'restart_failed', error: new Error('no') },
      { kind: 'shutting_down' },
      { kind: 'internal', doing: '', error: 'boom' },
    ];
    for (const failure of failures) {
      expect(toProxyWireError(failure).data).toMatchObject({ kind: failure.kind });
    }
  });

  it('names the tool or method of an unknown outcome bounded, however long the client made it', () => {
    const tool = `t${'x'.repeat(150_000)}`;
    expect(toProxyWireError({ kind: 'outcome_unknown', method: 'tools/call', tool }).message).toBe(
      `The MCP server restarted while the tool "t${'x'.repeat(79)}…" was running; it may or may not have taken effect. Check the notebook before retrying.`,
    );
    expect(toProxyWireError({ kind: 'outcome_unknown', method: 'tools/call', tool }).data).toEqual({
      kind: 'outcome_unknown',
      tool: `"t${'x'.repeat(79)}…"`,
    });
    expect(toProxyWireError({ kind: 'outcome_unknown', method: 'tools/call', tool: 'create_cell' }).message).toMatch(
      /^The MCP server restarted while the tool 'create_cell' was running;/,
    );
  });

  it('names the last exit and the next attempt of an open breaker', () => {
    const error = toProxyWireError({
      kind: 'breaker_open',
      reason: 'The child crashed 6 times in 30 s.',
      lastExit: { code: 1, signal: null },
      nextAttemptAt: Date.UTC(2026, 0, 1, 12, 0, 0),
    });
    expect(error).toEqual({
      code: -32000,
      message: 'The child crashed 6 times in 30 s.',
      data: { kind: 'breaker_open', last_exit: 'exit code 1', next_attempt_at: '2026-01-01T12:00:00.000Z' },
    });
  });

  it('keeps the code and data of a protocol era refusal as the era gave them', () => {
    const data = { supported: ['2026-07-28'], requested: '2025-06-18' };
    expect(toProxyWireError({ kind: 'protocol_era', code: -32022, message: 'Unsupported', data })).toEqual({
      code: -32022,
      message: 'Unsupported',
      data,
    });
  });

  it('reads a supervisor error: an open breaker or a fatal exit is breaker_open, anything else child_unavailable', () => {
    const breaker = { lastExit: { code: null, signal: 'SIGKILL' as const }, nextAttemptAt: 5 };
    expect(failureOfError(new CoreError('restartBudgetExhausted', 'open'), breaker)).toMatchObject({
      kind: 'breaker_open',
      lastExit: breaker.lastExit,
      nextAttemptAt: 5,
    });
    expect(failureOfError(new CoreError('childStartFailed', 'missing'), breaker).kind).toBe('breaker_open');
    expect(failureOfError(new CoreError('childUnavailable', 'late'), breaker)).toEqual({
      kind: 'child_unavailable',
      reason: 'late',
    });
  });
});
