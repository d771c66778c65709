import { randomHex } from '@nteract-mcp/foundation';

/**
 * The idempotency keys the proxy stamps on tool calls: a random prefix drawn once per proxy, then
 * a counter, so a key never repeats within a proxy nor across proxies (restarts included), and
 * drawing one costs no randomness. Keys are opaque to the child.
 */
export class IdempotencyKeys {
  readonly #prefix: string;
  #count = 0;

  /** `prefix` defaults to 128 random bits (hex). */
  public constructor(prefix: string = randomHex(16)) {
    this.#prefix = prefix;
  }

  /** A key no earlier call of this or any other instance returned. */
  public next(): string {
    this.#count += 1;
    return `${this.#prefix}:${this.#count}`;
  }
}
