import { defineProject } from 'vitest/config';

/**
 * The real-process tests: an `expect.poll` waits for its condition up to 30 s (vitest's default,
 * one second, is a wait for time on a loaded machine: a cell's end, a page's next frame).
 */
export default defineProject({
  test: {
    expect: { poll: { timeout: 30_000 } },
  },
});
