import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import { compareIdentity, currentBootId, identifyProcess, probeProcess } from '../process/probe-process.js';
import { terminateVerifiedProcess } from '../process/terminate-verified-process.js';

/** One running kernel as its daemon recorded it (`<dir>/<pid>.json`). */
export interface KernelRecord {
  readonly pid: number;
  readonly startTime?: string;
  readonly bootId?: string;
  readonly connectionFile: string;
  /** The private temp directory holding the connection file (removed with it). */
  readonly connectionDir: string;
  readonly daemonPid: number;
}

/** The name every kernel's private connection directory starts with (a sweep removes only these). */
export const connectionDirPrefix = 'nteract-kernel-';
const reapTermGraceMs = 2000;
const reapKillGraceMs = 2000;

/**
 * The daemon's record of the kernels it runs, one small file per kernel in the data dir, so that
 * kernels a dead daemon leaves behind can be found: the next daemon (which holds the data-dir
 * lock, so no live daemon owns them) calls {@link reapOrphans} before it serves. Only a process
 * whose identity (pid, start time, boot id) matches its record is signalled; the connection file
 * and its directory are removed either way; so is every other connection directory left in
 * `connectionDir` (the daemon's runtime dir, where its kernels' connection files go): at that
 * point no kernel of this daemon runs yet. Recording failures are logged, never fatal.
 */
export class KernelRecords {
  public constructor(
    private readonly dir: string,
    private readonly logger?: Logger,
    private readonly connectionDir?: string,
  ) {}

  /** Records the kernel process `pid`, just launched with `connectionFile` in `connectionDir`. */
  public async add(pid: number, connectionFile: string, connectionDir: string): Promise<void> {
    try {
      const identity = await identifyProcess(pid);
      const record = {
        pid,
        start_time: identity?.startTime,
        boot_id: identity?.bootId,
        connection_file: connectionFile,
        connection_dir: connectionDir,
        daemon_pid: process.pid,
      };
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(this.pathOf(pid), `${JSON.stringify(record)}\n`, 0o600);
    } catch (error) {
      this.logger?.warn('could not record a kernel process', { pid, error: (error as Error).message });
    }
  }

  /** Forgets the kernel process `pid` (it has exited and its files are gone). */
  public async remove(pid: number): Promise<void> {
    await rm(this.pathOf(pid), { force: true }).catch(() => undefined);
  }

  /**
   * Stops every recorded kernel that still runs (SIGTERM to its process group, SIGKILL after a
   * bound) and removes the records and connection files. Call only while holding the data-dir
   * lock, before starting any kernel. Resolves with the pids that were signalled.
   */
  public async reapOrphans(): Promise<number[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const bootId = await currentBootId();
    const reaped: number[] = [];
    await Promise.all(
      names
        .filter((name) => /^\d+\.json$/.test(name))
        .map(async (name) => {
          const path = join(this.dir, name);
          const record = parseKernelRecord(await readFile(path, 'utf8').catch(() => ''));
          if (record !== undefined) {
            const probe = await probeProcess(record.pid);
            const match = compareIdentity(record, probe, bootId);
            if (match === 'same') {
              const outcome = await terminateVerifiedProcess(record, {
                termGraceMs: reapTermGraceMs,
                killGraceMs: reapKillGraceMs,
                group: true,
              });
              reaped.push(record.pid);
              this.logger?.warn('stopped an orphaned kernel of a previous daemon', {
                pid: record.pid,
                previousDaemon: record.daemonPid,
                outcome,
              });
            } else if (match === 'unknown') {
              this.logger?.warn('an orphaned kernel record names a live process that cannot be verified; left alone', {
                pid: record.pid,
              });
            }
            await removeConnectionFiles(record);
          }
          await rm(path, { force: true });
        }),
    );
    await this.sweepConnectionDir();
    return reaped;
  }

  /** Removes the connection directories left in `connectionDir` (only those named like ours). */
  private async sweepConnectionDir(): Promise<void> {
    if (this.connectionDir === undefined) return;
    const entries = await readdir(this.connectionDir).catch(() => [] as string[]);
    const stale = entries.filter((name) => name.startsWith(connectionDirPrefix));
    await Promise.all(
      stale.map((name) =>
        rm(join(this.connectionDir as string, name), { recursive: true, force: true }).catch(() => undefined),
      ),
    );
    if (stale.length > 0)
      this.logger?.info('removed connection files of kernels that no longer run', { count: stale.length });
  }

  private pathOf(pid: number): string {
    return join(this.dir, `${pid}.json`);
  }
}

function parseKernelRecord(text: string): KernelRecord | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { pid, start_time, boot_id, connection_file, connection_dir, daemon_pid } = value ?? {};
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (typeof connection_file !== 'string' || typeof connection_dir !== 'string') return undefined;
  return {
    pid,
    ...(typeof start_time === 'string' ? { startTime: start_time } : {}),
    ...(typeof boot_id === 'string' ? { bootId: boot_id } : {}),
    connectionFile: connection_file,
    connectionDir: connection_dir,
    daemonPid: typeof daemon_pid === 'number' ? daemon_pid : 0,
  };
}

/** Removes the connection file, and its directory when it is one of ours (never anything else). */
async function removeConnectionFiles(record: KernelRecord): Promise<void> {
  await rm(record.connectionFile, { force: true }).catch(() => undefined);
  if (basename(record.connectionDir).startsWith(connectionDirPrefix)) {
    await rm(record.connectionDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
