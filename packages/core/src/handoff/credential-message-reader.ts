import { StringDecoder } from 'node:string_decoder';
import { type CredentialChannelMessage, decodeCredentialMessage } from './credential-channel.js';

/** The longest line of the credential channel read (a `handed` line carries every kept token). */
export const maxCredentialLineChars = 1 << 20;

/**
 * Splits what arrives on the credential channel (`credential-channel.ts`) into its messages, one
 * per line, however the bytes are chunked: a line may end in `\r\n`; a line that is not a message
 * (see {@link decodeCredentialMessage}) is skipped, and one longer than `maxLineChars` is dropped
 * whole, so a peer that never sends a newline cannot make it buffer without bound. Both ends of
 * the channel read with it (instead of `node:readline`, which the proxy would load for this
 * alone). Pure: no I/O.
 */
export class CredentialMessageReader {
  readonly #decoder = new StringDecoder('utf8');
  #pending = '';
  /** The current line outgrew the cap: its rest is skipped up to the next newline. */
  #dropping = false;

  public constructor(private readonly maxLineChars: number = maxCredentialLineChars) {}

  /** Feeds the next chunk; returns the messages of the lines it completed, in order. */
  public push(chunk: Buffer | string): CredentialChannelMessage[] {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const messages: CredentialChannelMessage[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const line = this.#pending + text.slice(start, end);
      this.#pending = '';
      start = end + 1;
      if (this.#dropping) {
        this.#dropping = false;
        continue;
      }
      this.#take(line, messages);
    }
    if (!this.#dropping) {
      this.#pending += text.slice(start);
      if (this.#pending.length > this.maxLineChars) {
        this.#pending = '';
        this.#dropping = true;
      }
    }
    return messages;
  }

  /** The input ended: the message of a last line without a newline, if it is one. */
  public end(): CredentialChannelMessage[] {
    const rest = this.#pending + this.#decoder.end();
    this.#pending = '';
    const dropping = this.#dropping;
    this.#dropping = false;
    const messages: CredentialChannelMessage[] = [];
    if (!dropping && rest.length > 0) this.#take(rest, messages);
    return messages;
  }

  #take(line: string, messages: CredentialChannelMessage[]): void {
    if (line.length > this.maxLineChars) return;
    const message = decodeCredentialMessage(line.endsWith('\r') ? line.slice(0, -1) : line);
    if (message) messages.push(message);
  }
}
