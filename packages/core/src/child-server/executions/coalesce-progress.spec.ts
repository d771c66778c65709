import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../testing/index.js';
import { coalesceProgress, progressIntervalMs } from './coalesce-progress.js';

describe(coalesceProgress, () => {
  it('sends the first report at once and then at most one per interval, the latest one', () => {
    const clock = new ManualClock();
    const sent: [number, string][] = [];
    const report = coalesceProgress(
      (progress, message) => sent.push([progress, message]),
      () => clock.now(),
    );
    for (let n = 1; n <= 300; n += 1) report(n, `${n} outputs`);
    expect(sent).toEqual([[1, '1 outputs']]);
    clock.advance(progressIntervalMs - 1);
    report(301, '301 outputs');
    expect(sent).toHaveLength(1);
    clock.advance(1);
    report(302, '302 outputs');
    report(303, '303 outputs');
    expect(sent).toEqual([
      [1, '1 outputs'],
      [302, '302 outputs'],
    ]);
    expect(clock.pendingTimerCount).toBe(0);
  });
});
