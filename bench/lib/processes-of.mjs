// The processes a benchmark's user started, found from outside (Linux /proc): the daemon and the
// children are spawned by the product, not by the benchmark, so their pids are looked up.
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of processes whose command line contains `needle` and whose HOME is `home`. */
export function processesOf(needle, home) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes(needle)) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`HOME=${home}`)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
