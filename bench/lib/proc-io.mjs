// What a process has read and written, and a file's size, as the benches that count bytes read them
// from outside (Linux /proc): the counters include sockets, pipes and files.
import { readFileSync, statSync } from 'node:fs';

/** Bytes `pid` has read through read(2)-like calls (sockets and pipes included). */
export function bytesRead(pid) {
  return Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

/** Bytes `pid` has written through write(2)-like calls (sockets and files). */
export function bytesWritten(pid) {
  return Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

/** The parent pid of `pid`. */
export function parentOf(pid) {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
}

/** A file's identity and size now (`undefined` while there is none). */
export function fileState(file) {
  try {
    const stat = statSync(file);
    return { ino: stat.ino, size: stat.size };
  } catch {
    return undefined;
  }
}
