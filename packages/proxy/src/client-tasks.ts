import type { Logger } from '@nteract-mcp/core';

/** How many task ids the proxy keeps for the next child (the child keeps as many of its own). */
export const maxKnownTasks = 256;

/** How many bytes the kept ids take as the handoff's JSON array, at most: well under an environment string's limit. */
export const maxKnownTaskBytes = 32 * 1024;

/**
 * The tasks the client created through this proxy, by id, oldest first, so that every new child
 * (after a SIGKILL or an upgrade handoff) lists them in `tasks/list` too (the proxy hands them over,
 * `handoffEnvironment.knownTasks`). An id is taken only from a child's successful answer that
 * created the task (the 2025-11-25 `CreateTaskResult`, `{ task: { taskId } }`, to a `tools/call`
 * that asked for a task); what a task is (its status, its result) is always a child's to say, read
 * from the daemon, never the proxy's.
 *
 * Bounded: at most {@link maxKnownTasks} ids taking at most {@link maxKnownTaskBytes} in the
 * handoff; past either, the oldest are forgotten (a later child no longer lists them, but any
 * child still answers `tasks/get` and `tasks/result` for them by id). Does not guarantee a child
 * can read every id it is given (a task of a notebook it has not rejoined is left out of its list).
 */
export class ClientTasks {
  readonly #logger: Logger;
  /** Task id → the bytes it takes in the handoff's JSON array; in creation order. */
  readonly #ids = new Map<string, number>();
  #bytes = 0;

  public constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Whether the answer to `request` may create a task (a `tools/call` asking for one): its result is then read. */
  public creates(request: { readonly method: string; readonly params?: unknown }): boolean {
    const task = (request.params as { task?: unknown } | undefined)?.task;
    return request.method === 'tools/call' && typeof task === 'object' && task !== null && !Array.isArray(task);
  }

  /** A child's successful `result` to `request` reached the client: the task it created, if any, is kept. */
  public answered(request: { readonly method: string; readonly params?: unknown }, result: unknown): void {
    if (!this.creates(request)) return;
    const task = (result as { task?: unknown } | undefined)?.task;
    const taskId = (task as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId !== 'string' || taskId.trim() === '' || this.#ids.has(taskId)) return;
    // Its place in the JSON array: the quoted, escaped id and a separator.
    const bytes = Buffer.byteLength(JSON.stringify(taskId)) + 1;
    if (bytes > maxKnownTaskBytes) {
      this.#logger.debug('a task id too long to hand over is not kept', { bytes });
      return;
    }
    this.#ids.set(taskId, bytes);
    this.#bytes += bytes;
    let forgotten = 0;
    while (this.#ids.size > maxKnownTasks || this.#bytes > maxKnownTaskBytes) {
      const [oldest, taken] = this.#ids.entries().next().value as [string, number];
      this.#ids.delete(oldest);
      this.#bytes -= taken;
      forgotten += 1;
    }
    if (forgotten > 0) this.#logger.debug('the oldest tasks are no longer handed to new children', { forgotten });
  }

  /** The kept task ids, oldest first. */
  public ids(): readonly string[] {
    return [...this.#ids.keys()];
  }
}
