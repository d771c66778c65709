import { memoryUsage } from 'node:process';
import { describe, expect, it } from 'vitest';
import { largeTransientBytes, releaseLargeTransient, releaseLargeTransientsNow } from './release-large-transient.js';

const MB = 1024 * 1024;

/** Waits for the task after this one (where the release collects). */
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

describe(releaseLargeTransient, () => {
  it('gives a dropped large buffer back at the next task', async () => {
    // A buffer is held outside V8's heap until the object pointing to it is collected.
    let held: Buffer | undefined = Buffer.alloc(64 * MB, 1);
    const whileHeld = memoryUsage().arrayBuffers;
    expect(whileHeld).toBeGreaterThanOrEqual(64 * MB);
    held = undefined;
    // Below the size, nothing is asked of V8 (which may still collect on its own).
    releaseLargeTransient(largeTransientBytes - 1);
    releaseLargeTransient(64 * MB);
    releaseLargeTransient(64 * MB);
    await nextTask();
    expect(memoryUsage().arrayBuffers).toBeLessThan(8 * MB);
    expect(held).toBeUndefined();
  });

  it('gives it back at once when asked to, before the next task', async () => {
    const drop = () => {
      Buffer.alloc(64 * MB, 1);
      releaseLargeTransient(64 * MB);
    };
    drop();
    expect(memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(64 * MB);
    releaseLargeTransientsNow();
    expect(memoryUsage().arrayBuffers).toBeLessThan(8 * MB);
  });
});
