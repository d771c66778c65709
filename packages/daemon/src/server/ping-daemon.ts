import { connect } from 'node:net';
import { RuntimedConnection } from '@nteract-mcp/runtimed-protocol';

/**
 * The outcome of a protocol ping: `answered` (by the daemon `pid`), `refused` (no socket file,
 * not a socket, nobody listening) or `silent` (something accepts connections but gave no valid
 * answer in time: a daemon whose event loop is busy, or a foreign listener).
 */
export type DaemonPing =
  | { readonly kind: 'answered'; readonly pid: number }
  | { readonly kind: 'refused' }
  | { readonly kind: 'silent' };

/**
 * Pings the daemon on `socketPath` for real: control handshake, then `ping`, each within
 * `timeoutMs`. A socket that merely accepts is not an answer.
 */
export async function pingDaemon(socketPath: string, timeoutMs: number): Promise<DaemonPing> {
  let opened: Awaited<ReturnType<typeof RuntimedConnection.open>>;
  try {
    opened = await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' }, timeoutMs });
  } catch {
    return (await accepts(socketPath, timeoutMs)) ? { kind: 'silent' } : { kind: 'refused' };
  }
  const { connection, greeting } = opened;
  try {
    const answer = await Promise.race([
      connection.request({ type: 'ping' }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref()),
    ]);
    const pid = Number(greeting.pid);
    return answer?.pong === true && Number.isInteger(pid) && pid > 0 ? { kind: 'answered', pid } : { kind: 'silent' };
  } catch {
    return { kind: 'silent' };
  } finally {
    connection.close();
  }
}

function accepts(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    const timer = setTimeout(() => finish(false), timeoutMs);
    const finish = (accepted: boolean): void => {
      clearTimeout(timer);
      probe.destroy();
      resolve(accepted);
    };
    probe.once('connect', () => finish(true));
    probe.once('error', () => finish(false));
  });
}
