/** The least time between two progress notifications of one call: at most four a second. */
export const progressIntervalMs = 250;

/**
 * `report`, sending at most one notification per `intervalMs` of `now()`: the first report goes
 * out at once, reports within the interval after a sent one are dropped (the next one after it
 * goes out, with the latest count and message). Nothing is sent later by a timer, so no
 * notification follows the call's answer.
 */
export function coalesceProgress(
  report: (progress: number, message: string) => void,
  now: () => number,
  intervalMs: number = progressIntervalMs,
): (progress: number, message: string) => void {
  let lastSent: number | undefined;
  return (progress, message) => {
    const at = now();
    if (lastSent !== undefined && at - lastSent < intervalMs) return;
    lastSent = at;
    report(progress, message);
  };
}
