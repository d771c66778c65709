import { Socket } from 'node:net';
import {
  type ChannelCredential,
  type CredentialChannelStore,
  encodeCredentialMessage,
} from '../../handoff/credential-channel.js';
import type { Logger } from '../logger.js';
import { CredentialMessageReader } from './credential-message-reader.js';

/** How long a child waits for the proxy's handed credentials before it goes on without. */
export const defaultCredentialWaitMs = 2_000;

export interface JoinCredentialChannelOptions {
  readonly logger: Logger;
  /** Default {@link defaultCredentialWaitMs}. */
  readonly waitMs?: number;
}

/**
 * The child's end of the credential channel on file descriptor `fd` (`credential-channel.ts`):
 * resolves once the proxy's handed credentials are in `credentials` (or the channel closed, could
 * not be opened, or `waitMs` passed: then with none), and from then on sends every token
 * `credentials` keeps to the proxy. Never rejects; the channel never keeps the process alive.
 * Nothing read or written here is logged.
 */
export function joinCredentialChannel(
  fd: number,
  credentials: CredentialChannelStore,
  options: JoinCredentialChannelOptions,
): Promise<void> {
  const { logger } = options;
  let socket: Socket;
  try {
    socket = new Socket({ fd, readable: true, writable: true });
  } catch (error) {
    logger.warn('the credential channel could not be opened; hosted URL tokens will not carry over', {
      fd,
      error: error instanceof Error ? error.message : String(error),
    });
    return Promise.resolve();
  }
  socket.unref();
  socket.on('error', (error) => logger.debug('credential channel error', { error: error.message }));
  const send = (credential: ChannelCredential): void => {
    if (socket.writable) socket.write(encodeCredentialMessage({ kind: 'keep', ...credential }));
  };
  return new Promise((resolve) => {
    let settled = false;
    const settle = (handed: readonly ChannelCredential[]): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      credentials.connect(handed, send);
      resolve();
    };
    const timer = setTimeout(() => {
      logger.warn('the proxy handed no credentials in time; going on without', {
        waitedMs: options.waitMs ?? defaultCredentialWaitMs,
      });
      settle([]);
    }, options.waitMs ?? defaultCredentialWaitMs);
    const reader = new CredentialMessageReader();
    socket.on('data', (chunk: Buffer) => {
      for (const message of reader.push(chunk)) if (message.kind === 'handed') settle(message.credentials);
    });
    // The handler above logs an error; the channel is over either way.
    socket.on('error', () => settle([]));
    socket.on('close', () => settle([]));
  });
}
