// A fresh user environment for benchmarks, as a user's first start has it: a temp HOME with the
// XDG dirs under it, nothing pre-started (the child auto-starts the daemon). `stop()` stops the
// daemon the product started there and removes the directory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function createUserHome(dist) {
  const root = mkdtempSync(join(tmpdir(), 'nteract-bench-'));
  const dirs = {
    home: join(root, 'home'),
    runtime: join(root, 'run'),
    project: join(root, 'project'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dirs.home,
    XDG_RUNTIME_DIR: dirs.runtime,
    XDG_CACHE_HOME: join(dirs.home, '.cache'),
    XDG_DATA_HOME: join(dirs.home, '.local', 'share'),
    XDG_CONFIG_HOME: join(dirs.home, '.config'),
  };
  return {
    env,
    dirs,
    stop() {
      spawnSync(process.execPath, [join(dist, 'runtimed.js'), 'stop'], { env, stdio: 'ignore', timeout: 30_000 });
      // What a daemon killed by a benchmark left (a kernel whose daemon was SIGKILLed, not reaped by
      // a successor) still runs with this HOME: ended too.
      for (const signal of ['SIGTERM', 'SIGKILL']) {
        const left = processesWithHome(dirs.home);
        for (const pid of left) {
          try {
            process.kill(pid, signal);
          } catch {
            // Gone meanwhile.
          }
        }
        if (left.length > 0) spawnSync('sleep', ['1']);
      }
      // `runtimed stop` returns once the daemon has exited; retried all the same, as removing a
      // directory another process (a kernel on its way out) still writes to can fail at first.
      rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    },
  };
}

/** The pids of the processes (not zombies) whose environment has `HOME=<home>`. */
function processesWithHome(home) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (/\) Z /.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`HOME=${home}`)) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}
