import { CoreError } from '../errors/core-error.js';

/**
 * One life of a daemon process: its pid and the start time it reports (fixed for the life of the
 * process). A restart, even of the same version, is a new incarnation; handles bound to an old one
 * are stale. Compare with {@link DaemonIncarnation.equals}, never by reference.
 */
export class DaemonIncarnation {
  private constructor(
    public readonly pid: number,
    /** The start time exactly as the daemon reports it (RFC 3339). */
    public readonly startedAt: string,
  ) {
    Object.freeze(this);
  }

  /** Throws `invalidIncarnation` unless `pid` is a positive integer and `startedAt` a parseable timestamp. */
  public static of(pid: number, startedAt: string): DaemonIncarnation {
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      throw new CoreError('invalidIncarnation', `Daemon pid must be a positive integer, got ${JSON.stringify(pid)}`);
    }
    if (typeof startedAt !== 'string' || Number.isNaN(Date.parse(startedAt))) {
      throw new CoreError(
        'invalidIncarnation',
        `Daemon started_at must be an RFC 3339 timestamp, got ${JSON.stringify(startedAt)}`,
      );
    }
    return new DaemonIncarnation(pid, startedAt);
  }

  /** Same pid and same reported start time. `undefined` (no live daemon) equals nothing. */
  public equals(other: DaemonIncarnation | undefined): boolean {
    return other !== undefined && other.pid === this.pid && other.startedAt === this.startedAt;
  }

  public toString(): string {
    return `pid ${this.pid} started ${this.startedAt}`;
  }

  public toJSON(): { pid: number; started_at: string } {
    return { pid: this.pid, started_at: this.startedAt };
  }
}
