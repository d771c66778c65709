const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/**
 * A credential (a Jupyter Server token) kept apart from the identity it belongs to. It prints as
 * `[redacted]` everywhere (string conversion, JSON, `util.inspect`, template literals); only
 * {@link SecretToken.reveal} gives the value, for the one place that sends it to the server.
 */
export class SecretToken {
  readonly #value: string;

  public constructor(value: string) {
    this.#value = value;
  }

  /** The raw credential. Call it only where the token is put on the wire to its server. */
  public reveal(): string {
    return this.#value;
  }

  public toString(): string {
    return '[redacted]';
  }

  public toJSON(): string {
    return '[redacted]';
  }

  public [inspectSymbol](): string {
    return 'SecretToken([redacted])';
  }
}
