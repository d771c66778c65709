import { RuntimedConnection } from '@nteract-mcp/core/runtimed-wire';

/**
 * The pid of the daemon that answers a real protocol ping on `socketPath` (control handshake, then
 * `ping`), or `undefined` when nothing does: no socket, nobody listening, something else
 * listening, or no answer within `timeoutMs`. A socket that merely accepts is not an answer.
 */
export async function pingDaemon(socketPath: string, timeoutMs: number): Promise<number | undefined> {
  let opened: Awaited<ReturnType<typeof RuntimedConnection.open>>;
  try {
    opened = await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' }, timeoutMs });
  } catch {
    return undefined;
  }
  const { connection, greeting } = opened;
  try {
    const answer = await Promise.race([
      connection.request({ type: 'ping' }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref()),
    ]);
    const pid = Number(greeting.pid);
    return answer?.pong === true && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    connection.close();
  }
}
