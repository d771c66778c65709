import type { Duplex } from 'node:stream';
import { CredentialMessageReader, encodeCredentialMessage, KeptCredentials, SecretToken } from '@nteract-mcp/core';

/**
 * The proxy's end of the credential channel (`credential-channel.ts` in core): it holds, in
 * memory only, the tokens its children kept for hosted scopes, and hands all of them to every
 * child it starts, so a child restarted after a crash can rejoin a notebook whose token was given
 * only in its URL. Nothing it holds is logged, written to a file, put into the handoff
 * environment, or sent to the MCP client.
 * Guarantees: the latest token a child kept for a scope wins; as many scopes as
 * {@link KeptCredentials} keeps; a malformed line is ignored.
 */
export class CredentialRelay {
  readonly #kept = new KeptCredentials();

  /** Hands what is held to a new child's channel, and keeps what that child sends back. */
  public attach(channel: Duplex | undefined): void {
    if (!channel) return;
    // A child that never reads the channel (a third-party server) resets it when it exits: the
    // error ends the channel, never the proxy.
    channel.on('error', () => undefined);
    channel.write(encodeCredentialMessage({ kind: 'handed', credentials: this.#kept.list() }));
    const reader = new CredentialMessageReader();
    channel.on('data', (chunk: Buffer) => {
      for (const message of reader.push(chunk)) {
        if (message.kind === 'keep') this.#kept.keep(message.scope, new SecretToken(message.token));
      }
    });
  }

  /** How many scopes have a token. */
  public get size(): number {
    return this.#kept.size;
  }
}
