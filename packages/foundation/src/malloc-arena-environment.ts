/**
 * How many malloc arenas glibc gives a long-lived process of the product. By default it makes one
 * per thread that allocates, up to 8 per core: V8's compiler and GC helper threads get theirs, and
 * memory freed in them stays resident. Measured side by side (bench/memory.mjs, 1,000
 * connect/disconnect cycles): the child keeps 4.4–4.7 MB after a full GC with glibc's default and
 * 1.5–2.2 MB with 2 arenas, 1.3 MB less RSS with 1 + 8 notebooks; calls one at a time and bursts of
 * 64 ran as fast either way (within the noise).
 */
export const mallocArenaMax = 2;

/**
 * The size from which glibc serves an allocation with its own mapping, fixed (its default start
 * value). Left to glibc, the threshold rises to the size of the largest mapped block freed (up to
 * 32 MB): after one large output (a 20 MB kernel message, its frame to a peer, a journal line)
 * every later buffer of that size comes from the heap, and freed there it stays resident. Measured
 * from outside after a full GC (test/large-output-memory.test.ts, a 20 MB output): the daemon
 * kept 82 MB more with glibc's default, 19 MB (the output itself) with the threshold fixed.
 */
export const mallocMmapThresholdBytes = 128 * 1024;

/**
 * `env` with `MALLOC_ARENA_MAX` at {@link mallocArenaMax} and `MALLOC_MMAP_THRESHOLD_` at
 * {@link mallocMmapThresholdBytes} for a long-lived process the product spawns, each unless `env`
 * sets it (the user's value wins). C libraries other than glibc ignore them.
 */
export function mallocArenaEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  return {
    ...env,
    MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? String(mallocArenaMax),
    MALLOC_MMAP_THRESHOLD_: env.MALLOC_MMAP_THRESHOLD_ ?? String(mallocMmapThresholdBytes),
  };
}
