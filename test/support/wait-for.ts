/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** Poll this often (default 50 ms). */
  readonly intervalMs?: number;
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false` and resolves with it; rejects
 * after the timeout with `what` and the last error the probe threw. Waits for a condition, never
 * for a fixed time.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
