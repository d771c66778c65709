import { idempotencyMetaKey } from '@nteract-mcp/core';
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

  /**
   * Stamps a new key into `params._meta` (changed in place) unless it holds one already; a
   * `_meta` that is not an object is left as it came, for the child to refuse.
   */
  public stamp(params: { _meta?: unknown }): void {
    const meta = params._meta === undefined ? {} : params._meta;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return;
    const fields = meta as Record<string, unknown>;
    if (typeof fields[idempotencyMetaKey] !== 'string') fields[idempotencyMetaKey] = this.next();
    params._meta = fields;
  }
}
