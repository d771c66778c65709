import { readdirSync, readFileSync } from 'node:fs';

/** One process as `/proc` describes it (Linux). */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`, ...). */
  readonly state: string;
  /** The command line, arguments joined by spaces. */
  readonly cmdline: string;
}

/** The process, or `undefined` when it is gone (a zombie counts as gone: it runs no more). */
export function processInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  let cmdline: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '?';
  if (state === 'Z' || state === 'X') return undefined;
  return { pid, ppid: Number(fields[1]), state, cmdline };
}

/** Whether the process runs (exists and is not a zombie). */
export function isAlive(pid: number): boolean {
  return processInfo(pid) !== undefined;
}

/** Every running process of this machine. */
export function allProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = processInfo(Number(entry));
    if (info) found.push(info);
  }
  return found;
}

/** The running children of a process. */
export function childrenOf(pid: number): ProcessInfo[] {
  return allProcesses().filter((info) => info.ppid === pid);
}

/** The running descendants of a process (children, their children, ...). */
export function descendantsOf(pid: number): ProcessInfo[] {
  const all = allProcesses();
  const found: ProcessInfo[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const info of all) {
      if (info.ppid === parent) {
        found.push(info);
        queue.push(info.pid);
      }
    }
  }
  return found;
}

/** Running processes whose environment has `HOME=<home>` (everything a session started inherits it). */
export function processesWithHome(home: string): ProcessInfo[] {
  const needle = `\0HOME=${home}\0`;
  return allProcesses().filter((info) => {
    if (info.pid === process.pid) return false;
    try {
      return `\0${readFileSync(`/proc/${info.pid}/environ`, 'utf8')}`.includes(needle);
    } catch {
      return false;
    }
  });
}
