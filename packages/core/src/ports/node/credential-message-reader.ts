import { type CredentialChannelMessage, decodeCredentialMessage } from '../../handoff/credential-channel.js';
import { JsonRpcLineFramer } from '../../json-rpc/json-rpc-line-framer.js';

/** The longest line of the credential channel read (a `handed` line carries every kept token). */
const maxCredentialLineBytes = 1024 * 1024;

/**
 * Splits what arrives on the credential channel (`handoff/credential-channel.ts`) into its
 * messages, one per line, with core's {@link JsonRpcLineFramer} (its reassembly of chunks split
 * anywhere, `\r\n`, and its cap: a line over `maxLineBytes` is dropped whole, so a peer that
 * never sends a newline cannot make a process buffer without bound). A line that is not a message
 * (see {@link decodeCredentialMessage}) is skipped. Both ends of the channel read with it, so the
 * proxy does not load `node:readline` for this alone. Pure: no I/O.
 */
export class CredentialMessageReader {
  readonly #framer: JsonRpcLineFramer<CredentialChannelMessage | null>;

  public constructor(maxLineBytes: number = maxCredentialLineBytes) {
    this.#framer = new JsonRpcLineFramer({
      maxLineBytes,
      // Every line is read here (null when it is no message): none is parsed as JSON-RPC.
      readLine: (line) => decodeCredentialMessage(line.toString('utf8')) ?? null,
    });
  }

  /** Feeds the next chunk; returns the messages of the lines it completed, in order. */
  public push(chunk: Buffer): CredentialChannelMessage[] {
    const messages: CredentialChannelMessage[] = [];
    for (const read of this.#framer.push(chunk)) {
      // The framer's own frames are its reports of overlong lines: dropped.
      if (read !== null && (read.kind === 'handed' || read.kind === 'keep')) messages.push(read);
    }
    return messages;
  }
}
