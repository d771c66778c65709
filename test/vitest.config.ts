import { defineProject } from 'vitest/config';

/**
 * The real-process tests: an `expect.poll` waits for its condition up to 30 s (vitest's default,
 * one second, is a wait for time on a loaded machine: a cell's end, a page's next frame). A hook
 * stops what its tests started and waits for those processes to exit, which takes longer than
 * vitest's default 10 s when the machine is loaded: its bound is a minute (a guard against a hang,
 * not a wait).
 */
export default defineProject({
  test: {
    expect: { poll: { timeout: 30_000 } },
    hookTimeout: 60_000,
  },
});
