import { type ClientIdentity, formatPeerLabel, readClientIdentity } from '@nteract-mcp/core';
import { randomHex } from '@nteract-mcp/foundation';

export interface ClientAttributionOptions {
  /** The `<session>` of the peer label suffix; a random 8-hex value when absent or blank. */
  readonly agentSession?: string;
}

/**
 * Who the upstream client is, for the peer label every child uses in its rooms:
 * `<title or name> agent:<slug>:<session>`. The `<session>` is stable for the life of this proxy,
 * so restarted children keep the same suffix; the identity comes from `clientInfo` (in
 * `initialize` or in a native request's `_meta`). Attribution, not authorization. Pure apart
 * from the random session value.
 */
export class ClientAttribution {
  readonly #agentSession: string;
  #client: ClientIdentity | undefined;

  public constructor(options: ClientAttributionOptions = {}) {
    this.#agentSession = options.agentSession?.trim() || randomHex(4);
  }

  /** Records the upstream `clientInfo`; values that are not a client identity are ignored. */
  public observeClientInfo(clientInfo: unknown): void {
    const identity = readClientIdentity(clientInfo);
    if (identity) this.#client = identity;
  }

  /** The upstream client's identity, once seen. */
  public clientIdentity(): ClientIdentity | undefined {
    return this.#client;
  }

  /** The stable `<session>` value of this proxy, handed to every child. */
  public agentSession(): string {
    return this.#agentSession;
  }

  /** The peer label a child uses until it has seen the client's `initialize` itself. */
  public peerLabel(): string {
    return formatPeerLabel(this.#client, this.#agentSession);
  }
}
