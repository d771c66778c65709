import { type Clock, CoreError } from '@nteract-mcp/core';
import type { RuntimedConnection, RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { toCoreError } from './to-core-error.js';

/**
 * Sends a request on `connection` and waits at most `timeoutMs` for its answer; a late answer is
 * dropped. Rejects with `daemonUnavailable` on timeout, or with what the connection rejected with.
 */
export function requestWithin(
  connection: RuntimedConnection,
  message: Readonly<Record<string, unknown>> & { readonly type: string },
  clock: Clock,
  timeoutMs: number,
): Promise<RuntimedFrame> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(timeoutMs, () =>
      reject(new CoreError('daemonUnavailable', `The daemon did not answer '${message.type}' within ${timeoutMs} ms`)),
    );
    connection.request(message).then(
      (frame) => {
        timer.cancel();
        resolve(frame);
      },
      (error: unknown) => {
        timer.cancel();
        reject(toCoreError(error));
      },
    );
  });
}
