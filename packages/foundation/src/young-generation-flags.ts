/**
 * The young generation a long-lived process of the product runs with, per semi-space, in MB. V8
 * starts it at 1 MB and doubles it whenever as many bytes have survived its scavenges as it holds,
 * up to 16 MB by default: in a process that lives for days, every relayed message adds to that
 * count, so it ends up holding 2 × 16 MB of mostly empty young generation. Measured side by side
 * (bench/memory.mjs): the daemon over 10,000 connect/disconnect cycles 62 → 97 MB uncapped, 60 →
 * 77 MB capped at 4 MB; the child over 3,000 cycles 107 vs 89 MB; all back to their start after a
 * full GC (nothing leaks), CPU per request within the noise. Smaller is not better: a small
 * semi-space promotes more, and 1–2 MB cost 10–23% more CPU under bursts of 64 calls.
 */
export const youngGenerationSemiSpaceMb = 4;

/**
 * The Node flags that cap a spawned process's young generation at {@link youngGenerationSemiSpaceMb},
 * or none when the user's `NODE_OPTIONS` sets `--max-semi-space-size` (theirs wins).
 */
export function youngGenerationFlags(env: Readonly<Record<string, string | undefined>>): string[] {
  return /(^|\s)--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? '')
    ? []
    : [`--max-semi-space-size=${youngGenerationSemiSpaceMb}`];
}
