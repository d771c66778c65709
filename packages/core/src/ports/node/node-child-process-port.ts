import { spawn } from 'node:child_process';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { ChildExit, ChildProcessHandle, ChildProcessPort, ChildSpawnSpec } from '../child-process-port.js';

/**
 * Spawns real processes with `stdio: ['pipe', 'pipe', 'inherit']`, plus a pipe on fd 3 (the
 * credential channel) when the spec asks for one; that pipe is destroyed when the child exits.
 */
export class NodeChildProcessPort implements ChildProcessPort {
  public spawn(spec: ChildSpawnSpec): ChildProcessHandle {
    const child = spawn(spec.command, [...spec.args], {
      env: spec.env as NodeJS.ProcessEnv,
      cwd: spec.cwd,
      stdio: spec.credentialChannel ? ['pipe', 'pipe', 'inherit', 'pipe'] : ['pipe', 'pipe', 'inherit'],
    });
    const credentials = spec.credentialChannel ? (child.stdio[3] as Duplex | null) : null;
    // The child's death ends the channel. Destroyed at 'exit', not 'close': a process the child
    // started may hold a copy of its end, and 'close' waits for every pipe to close.
    credentials?.on('error', () => undefined);
    child.once('exit', () => credentials?.destroy());
    let spawnError: string | undefined;
    const exited = new Promise<ChildExit>((resolve) => {
      child.once('error', (error) => {
        spawnError = error.message;
        if (child.pid === undefined) resolve({ code: null, signal: null, spawnError });
      });
      child.once('close', (code, signal) => resolve({ code, signal, ...(spawnError ? { spawnError } : {}) }));
    });
    return {
      pid: child.pid,
      // Both are pipes (stdio above); the conditional stdio list only hides that from the types.
      stdin: child.stdin as Writable,
      stdout: child.stdout as Readable,
      ...(credentials ? { credentials } : {}),
      exited,
      kill: (signal: NodeJS.Signals = 'SIGTERM') => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      },
    };
  }
}
