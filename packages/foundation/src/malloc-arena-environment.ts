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
 * `env` with `MALLOC_ARENA_MAX` at {@link mallocArenaMax} for a long-lived process the product
 * spawns, unless `env` sets it (the user's value wins). C libraries other than glibc ignore it.
 */
export function mallocArenaEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  return env.MALLOC_ARENA_MAX === undefined ? { ...env, MALLOC_ARENA_MAX: String(mallocArenaMax) } : { ...env };
}
