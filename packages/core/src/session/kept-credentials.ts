import { injectable } from 'inversify';
import type { ChannelCredential, CredentialChannelStore } from '../handoff/credential-channel.js';
import { SecretToken } from '../notebook-target/secret-token.js';
import type { SessionCredentials } from '../ports/session-credentials.js';

/** How many scopes are kept at most (the least recently kept goes first). */
export const maxKeptCredentials = 64;

/**
 * Core's {@link SessionCredentials}: a bounded map in memory. {@link KeptCredentials.connect}
 * adopts what the proxy handed over at start and, from then on, passes every newly kept token to
 * the proxy (through `send`), so the next child gets it. Pure bookkeeping: the channel's I/O is
 * the caller's.
 */
@injectable()
export class KeptCredentials implements SessionCredentials, CredentialChannelStore {
  readonly #tokens = new Map<string, SecretToken>();
  #send: ((credential: ChannelCredential) => void) | undefined;

  /** Adopts `handed` (tokens the proxy held) and sends every token kept from now on. */
  public connect(handed: readonly ChannelCredential[], send: (credential: ChannelCredential) => void): void {
    for (const { scope, token } of handed) this.#store(scope, new SecretToken(token));
    this.#send = send;
  }

  public keep(scope: string, token: SecretToken): void {
    if (this.#tokens.get(scope)?.reveal() === token.reveal()) return;
    this.#store(scope, token);
    this.#send?.({ scope, token: token.reveal() });
  }

  public find(scope: string): SecretToken | undefined {
    return this.#tokens.get(scope);
  }

  /** Every kept token with its scope, oldest first: what a channel hands over. */
  public list(): ChannelCredential[] {
    return [...this.#tokens].map(([scope, token]) => ({ scope, token: token.reveal() }));
  }

  /** How many scopes have a token. */
  public get size(): number {
    return this.#tokens.size;
  }

  #store(scope: string, token: SecretToken): void {
    this.#tokens.delete(scope);
    this.#tokens.set(scope, token);
    for (const oldest of this.#tokens.keys()) {
      if (this.#tokens.size <= maxKeptCredentials) break;
      this.#tokens.delete(oldest);
    }
  }
}
