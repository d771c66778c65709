import { createServer, type Server, type Socket } from 'node:net';
import { encodeRuntimedFrame, type RuntimedFrame, RuntimedFrameDecoder } from '@nteract-mcp/runtimed-protocol';

// For this package's specs only (not exported): an in-process runtimed stand-in.

/** What a scripted connection may do: answer requests and push frames (several frames = one write). */
export interface ScriptedPeer {
  readonly handshake: RuntimedFrame;
  send(...frames: RuntimedFrame[]): void;
}

export interface RuntimedScript {
  /** Answers the handshake (`send` the greeting, possibly with more frames in the same write). */
  onHandshake(peer: ScriptedPeer): void;
  /** Answers a request; returns nothing to stay silent. */
  onRequest?(request: RuntimedFrame, peer: ScriptedPeer): void;
}

export interface ScriptedRuntimedDaemon {
  /** Every request after a handshake, in arrival order, over all connections. */
  readonly requests: RuntimedFrame[];
  /** Drops every connection and stops listening. */
  stop(): Promise<void>;
}

/**
 * Listens at `socketPath` and speaks runtimed's framing (the 5-byte preamble, then frames) on
 * every connection, following `script`. The caller stops it.
 */
export async function scriptedRuntimedDaemon(
  socketPath: string,
  script: RuntimedScript,
): Promise<ScriptedRuntimedDaemon> {
  const requests: RuntimedFrame[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    const decoder = new RuntimedFrameDecoder();
    let preamble = Buffer.alloc(0);
    let peer: ScriptedPeer | undefined;
    socket.on('data', (chunk: Buffer) => {
      let data = chunk;
      if (preamble.length < 5) {
        preamble = Buffer.concat([preamble, chunk]);
        if (preamble.length < 5) return;
        data = preamble.subarray(5);
      }
      for (const decoded of decoder.push(data)) {
        if (decoded.kind !== 'frame') return;
        const frame = decoded.value as RuntimedFrame;
        if (!peer) {
          peer = {
            handshake: frame,
            send: (...frames) => socket.write(Buffer.concat(frames.map((item) => encodeRuntimedFrame(item)))),
          };
          script.onHandshake(peer);
        } else {
          requests.push(frame);
          script.onRequest?.(frame, peer);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
