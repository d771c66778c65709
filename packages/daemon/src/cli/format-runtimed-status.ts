import type { WireRoomInfo } from '@nteract-mcp/runtimed-protocol';

/**
 * The human form of `runtimed status` for a daemon that answers: the daemon, its socket, its web page, then each
 * room with its peers (count and labels), its kernel (state, status, kernelspec, pid) and its last
 * save. A room from a daemon that does not send the newer `list_rooms` fields shows what it has.
 */
export function formatRuntimedStatus(
  /** The control channel's greeting: `version`, `pid`, `started_at`. */
  daemon: Readonly<Record<string, unknown>>,
  socketPath: string,
  rooms: readonly WireRoomInfo[],
  /** The web page's base address, which opens nothing by itself (`null`: none served). */
  page: string | null = null,
): string {
  const lines = [
    `runtimed ${String(daemon.version)} running (pid ${String(daemon.pid)}, started ${String(daemon.started_at)})`,
    `socket: ${socketPath}`,
    `page: ${page === null ? 'none' : `${page} ('runtimed open' prints an address that opens it)`}`,
    `rooms: ${rooms.length}`,
  ];
  for (const room of rooms) {
    const name = room.notebook_path ?? (room.ephemeral ? 'untitled (ephemeral)' : 'untitled');
    lines.push(`  ${name}  ${room.notebook_id}`);
    const labels = room.peer_labels?.length ? ` (${room.peer_labels.join(', ')})` : '';
    lines.push(`    peers: ${room.active_peers}${labels}`);
    lines.push(`    kernel: ${describeKernel(room)}`);
    if (room.last_saved !== undefined) {
      lines.push(
        `    last save: ${room.last_saved === null ? 'none yet' : `${room.last_saved.at} to ${room.last_saved.path}`}`,
      );
    }
    if (room.file_conflict !== undefined) lines.push(`    file conflict: ${room.file_conflict}`);
  }
  return `${lines.map((line) => `${line}\n`).join('')}`;
}

/** `ready, idle (python3, pid 4242)`; `unavailable: <reason> (ir)`; `idle` from an older daemon. */
function describeKernel(room: WireRoomInfo): string {
  const { runtime } = room;
  const details = [room.kernel_name, room.kernel_pid === undefined ? undefined : `pid ${room.kernel_pid}`].filter(
    (part): part is string => part !== undefined,
  );
  const suffix = details.length > 0 ? ` (${details.join(', ')})` : '';
  if (runtime === undefined) return `${room.kernel_status ?? 'none'}${suffix}`;
  const state = runtime.state.replace('_', ' ');
  const status =
    runtime.kernel_status !== null && runtime.kernel_status !== runtime.state ? `, ${runtime.kernel_status}` : '';
  const reason = runtime.reason === undefined ? '' : `: ${runtime.reason}`;
  return `${state}${status}${reason}${suffix}`;
}
