/**
 * The young generation the detached daemon runs with, per semi-space, in MB. V8 starts it at 1 MB
 * and doubles it whenever as many bytes have survived its scavenges as it holds, up to 16 MB by
 * default: in a daemon that lives for days every relayed message adds to that count, so it ends up
 * holding up to 2 × 16 MB of mostly empty young generation (bench/memory.mjs, 5,000 connect
 * cycles: young generation 1 → 16 MB and still growing, RSS 67 → 88 MB, all of it given back by a
 * full GC). Capped at 4 MB: 81 instead of 86 MB at 3,000 cycles, and CPU per relayed message and
 * latency within the noise of side-by-side runs. Smaller is not better: a small semi-space
 * promotes more, and 1–2 MB cost 10–23% more CPU under bursts of 64 calls.
 */
export const daemonSemiSpaceMb = 4;

/**
 * The Node arguments of the detached daemon `runtimed start` spawns: its V8 flags, the bin, the
 * caller's arguments and `--foreground`. A `--max-semi-space-size` of the user's own (in
 * NODE_OPTIONS) is left to win.
 */
export function detachedDaemonArguments(
  entry: string,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const userChoseSemiSpace = /(^|\s)--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? '');
  const flags = userChoseSemiSpace ? [] : [`--max-semi-space-size=${daemonSemiSpaceMb}`];
  return [...flags, entry, ...argv, '--foreground'];
}
