import { setFlagsFromString } from 'node:v8';

/**
 * The young generation a long-lived process of the product runs with, per semi-space, in MB. V8
 * starts it at 1 MB and doubles it whenever as many bytes have survived its scavenges as it holds,
 * up to 16 MB by default: in a process that lives for days, every relayed message adds to that
 * count, so it ends up holding 2 × 16 MB of mostly empty young generation. Measured side by side
 * (bench/memory.mjs): the daemon over 10,000 connect/disconnect cycles 62 → 97 MB uncapped, 60 →
 * 77 MB capped at 4 MB; the child over 3,000 cycles 107 vs 89 MB; all back to their start after a
 * full GC (nothing leaks), CPU per request within the noise. Smaller is not better: a small
 * semi-space promotes more, and 1–2 MB cost 10–23% more CPU under bursts of 64 calls.
 *
 * The old generation is left to V8. It collects again only once the old generation has grown
 * past what its last mark-compact left by at least 8 MB (its minimum allocation-limit step; 2 MB
 * only in its low-memory mode) plus the young generation's capacity. So a process that promotes a
 * few KB per request (the MCP SDK's server does: an AbortSignal and two failed zod parses each)
 * shows up to that much raw growth, which a GC gives back. The flags that would shrink it were
 * measured on 2026-12-03, one run each, and not shipped. `--optimize-for-size` (the low-memory
 * mode) cut the first 1,000 connect/disconnect cycles' growth from 17.5 to 10.2 MB (child) and
 * 13.1 to 7.3 MB (daemon). It also made a `get_all_cells` round trip 29% slower at p50 (210 →
 * 271 µs) and cut calls per second at 64 in flight by a third (12,540 → 8,454).
 * `--heap-growing-percent=20` changed nothing: at these heap sizes the 8 MB step sets the limit.
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

/**
 * Keeps this process's young generation from growing past the size V8 starts it with (1 MB per
 * semi-space) for the rest of its life, unless the user's `NODE_OPTIONS` sizes it. For the proxy,
 * which the MCP client starts (so it cannot be given Node flags) and which relays bytes: it keeps
 * little alive across a scavenge (64 calls in flight hold about 64 KB), yet V8 doubled its young
 * generation as the bytes that survived its scavenges added up (2 × 2 MB within the first
 * thousands of calls, 2 × 4 MB after bursts of 64 that followed an idle spell). Set at run time:
 * V8 reads the growth factor each time it would grow the young generation. V8's memory reducer may
 * still shrink it when the process idles (to 2 × 0.5 MB), and it then stays there: more of what
 * lives across two scavenges is promoted, and waits in the old generation for its next
 * mark-compact. Measured (2026-12-04, one run each): 56.9 MB RSS after 20 s idle and 12,600 more
 * calls with it, 61.6 MB without; calls per second at 64 in flight and latency within the noise.
 */
export function holdYoungGenerationAtStart(env: Readonly<Record<string, string | undefined>>): void {
  if (youngGenerationFlags(env).length === 0) return;
  setFlagsFromString('--semi-space-growth-factor=1');
}
