/**
 * The young generation the detached daemon runs with, per semi-space, in MB. V8 starts it at 1 MB
 * and doubles it whenever as many bytes have survived its scavenges as it holds, up to 16 MB by
 * default: in a daemon that lives for days every relayed message adds to that count, so it ends up
 * holding 2 × 16 MB of mostly empty young generation. Side by side over 10,000 connect/disconnect
 * cycles: 62 → 97 MB uncapped, 60 → 77 MB capped at 4 MB (level from 3,000 cycles on), both back
 * to 62–64 MB after a full GC (nothing leaks), with CPU per request within the noise of
 * side-by-side runs. Smaller is not better: a small semi-space promotes more, and 1–2 MB cost
 * 10–23% more CPU under bursts of 64 calls.
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
