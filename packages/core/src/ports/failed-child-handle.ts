import { PassThrough } from 'node:stream';
import type { ChildProcessHandle } from './child-process-port.js';

/** The handle of a child that never started: no pid, ended pipes, and an exit carrying `spawnError`. */
export function failedChildHandle(spawnError: string): ChildProcessHandle {
  const stdout = new PassThrough();
  stdout.end();
  return {
    pid: undefined,
    stdin: new PassThrough(),
    stdout,
    exited: Promise.resolve({ code: null, signal: null, spawnError }),
    kill: () => undefined,
  };
}
