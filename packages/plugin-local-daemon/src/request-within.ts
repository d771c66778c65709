import { type Clock, CoreError } from '@nteract-mcp/core';
import type { RuntimedConnection, WireControlAnswer, WireControlRequest } from '@nteract-mcp/runtimed-protocol';
import { toCoreError } from './to-core-error.js';

/**
 * Sends a control request on `connection` and waits at most `timeoutMs` for its answer, read with
 * the answer's schema; a late answer is dropped. Rejects with `daemonUnavailable` on timeout, with
 * `protocolViolation` for an answer that breaks its schema, or with what the connection rejected
 * with (as a {@link CoreError}).
 */
export function requestWithin<R extends WireControlRequest>(
  connection: RuntimedConnection,
  message: R,
  clock: Clock,
  timeoutMs: number,
): Promise<WireControlAnswer<R['type']>> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(timeoutMs, () =>
      reject(new CoreError('daemonUnavailable', `The daemon did not answer '${message.type}' within ${timeoutMs} ms`)),
    );
    connection.requestControl(message).then(
      (answer) => {
        timer.cancel();
        resolve(answer);
      },
      (error: unknown) => {
        timer.cancel();
        reject(toCoreError(error));
      },
    );
  });
}
