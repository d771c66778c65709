/**
 * The young generation the detached daemon runs with, per semi-space. V8 starts it at 1 MB and
 * doubles it whenever as many bytes have survived its scavenges as it holds, up to 16 MB by
 * default (2 × 16 MB with both semi-spaces): in a daemon that lives for days every message relayed
 * adds to that count, so it ends up holding up to ~30 MB of mostly empty young generation (measured
 * by bench/memory.mjs: +24 MB of RSS between 1,000 and 5,000 connect cycles, all of it given back
 * by a full GC). Capped at 4 MB, CPU per relayed message and latency stayed within the noise of
 * side-by-side runs (a small semi-space promotes more, so 1–2 MB cost 5–20% CPU under bursts).
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
