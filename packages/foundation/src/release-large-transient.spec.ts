import { memoryUsage } from 'node:process';
import { describe, expect, it } from 'vitest';
import {
  largeTransientBytes,
  releaseLargeTransient,
  releaseLargeTransientsNow,
  releaseLargeTransientWhenAnswered,
} from './release-large-transient.js';

const MB = 1024 * 1024;

/** Waits for the task after this one (where the release collects). */
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The process's array buffers after a full collection: what the test runner itself holds (its
 * messages, larger on a loaded machine), against which a test's own buffer is judged.
 */
function baselineArrayBuffers(): number {
  releaseLargeTransient(largeTransientBytes);
  releaseLargeTransientsNow();
  return memoryUsage().arrayBuffers;
}

describe(releaseLargeTransient, () => {
  it('gives a dropped large buffer back at the next task', async () => {
    const baseline = baselineArrayBuffers();
    // A buffer is held outside V8's heap until the object pointing to it is collected.
    let held: Buffer | undefined = Buffer.alloc(64 * MB, 1);
    const whileHeld = memoryUsage().arrayBuffers;
    expect(whileHeld - baseline).toBeGreaterThanOrEqual(56 * MB);
    held = undefined;
    // Below the size, nothing is asked of V8 (which may still collect on its own).
    releaseLargeTransient(largeTransientBytes - 1);
    releaseLargeTransient(64 * MB);
    releaseLargeTransient(64 * MB);
    await nextTask();
    expect(memoryUsage().arrayBuffers - baseline).toBeLessThan(8 * MB);
    expect(held).toBeUndefined();
  });

  it('gives it back at once when asked to, before the next task', async () => {
    const baseline = baselineArrayBuffers();
    const drop = () => {
      Buffer.alloc(64 * MB, 1);
      releaseLargeTransient(64 * MB);
    };
    drop();
    expect(memoryUsage().arrayBuffers - baseline).toBeGreaterThanOrEqual(56 * MB);
    releaseLargeTransientsNow();
    // V8 frees a collected buffer's memory on a background thread: wait for it here, in this
    // task (a busy wait yields to no other task).
    const deadline = performance.now() + 2000;
    while (memoryUsage().arrayBuffers - baseline >= 8 * MB && performance.now() < deadline);
    expect(memoryUsage().arrayBuffers - baseline).toBeLessThan(8 * MB);
  });

  it('keeps a transient told to wait for the answer until the answer, past a scheduled collection', async () => {
    const baseline = baselineArrayBuffers();
    let held: Buffer | undefined = Buffer.alloc(64 * MB, 1);
    releaseLargeTransientWhenAnswered(64 * MB);
    // Another transient's collection runs while the request still holds its own.
    releaseLargeTransient(64 * MB);
    await nextTask();
    expect(memoryUsage().arrayBuffers - baseline).toBeGreaterThanOrEqual(56 * MB);
    held = undefined;
    // The answer: what waited for it is given back.
    releaseLargeTransientsNow();
    const deadline = performance.now() + 2000;
    while (memoryUsage().arrayBuffers - baseline >= 8 * MB && performance.now() < deadline);
    expect(memoryUsage().arrayBuffers - baseline).toBeLessThan(8 * MB);
    expect(held).toBeUndefined();
  });
});
