// Order statistics of samples (µs or ms): the figures benchmarks report.

/** The q-quantile (0..1) of `samples`, nearest rank. */
export function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function summarize(samples) {
  return { n: samples.length, p50: quantile(samples, 0.5), p90: quantile(samples, 0.9), p99: quantile(samples, 0.99) };
}

/** {@link summarize} of each named sample set: `{ name: samples }` ⇒ `{ name: summary }`. */
export function summarizeEach(sets) {
  return Object.fromEntries(Object.entries(sets).map(([name, samples]) => [name, summarize(samples)]));
}

/** Resolves with `check()`'s first truthy value, polled every `pollMs`; throws after `timeoutMs`. */
export async function until(what, check, timeoutMs = 60_000, pollMs = 5) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Microseconds since `start` (a `process.hrtime.bigint()`). */
export function elapsedUs(start) {
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** The resident set size of process `pid`, in MB (Linux /proc), or NaN where it cannot be read. */
export async function rssMb(pid) {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Nanoseconds process `pid` has spent on a CPU so far on its main thread and on all its other
 * threads (V8's compiler and GC helpers, libuv's pool), from /proc/<pid>/task/<tid>/schedstat;
 * NaN where they cannot be read.
 */
export async function threadCpuNs(pid) {
  const { readdir, readFile } = await import('node:fs/promises');
  try {
    let main = 0;
    let background = 0;
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const stat = await readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').catch(() => '0');
      if (Number(tid) === pid) main += Number(stat.split(' ')[0]);
      else background += Number(stat.split(' ')[0]);
    }
    return { main, background };
  } catch {
    return { main: Number.NaN, background: Number.NaN };
  }
}

/**
 * Nanoseconds process `pid` has spent on a CPU so far, all its threads (Linux
 * /proc/<pid>/task/<tid>/schedstat, first field), or NaN where it cannot be read. Unlike a wall
 * time, this barely changes when other processes load the machine.
 */
export async function cpuNs(pid) {
  const { main, background } = await threadCpuNs(pid);
  return main + background;
}
