import { spawn } from 'node:child_process';
import type { ChildExit, ChildProcessHandle, ChildProcessPort, ChildSpawnSpec } from '../child-process-port.js';

/** Spawns real processes with `stdio: ['pipe', 'pipe', 'inherit']`. */
export class NodeChildProcessPort implements ChildProcessPort {
  public spawn(spec: ChildSpawnSpec): ChildProcessHandle {
    const child = spawn(spec.command, [...spec.args], {
      env: spec.env as NodeJS.ProcessEnv,
      cwd: spec.cwd,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
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
      stdin: child.stdin,
      stdout: child.stdout,
      exited,
      kill: (signal: NodeJS.Signals = 'SIGTERM') => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      },
    };
  }
}
