import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { releaseLargeTransient } from '@nteract-mcp/foundation';

/** The frame that separates ZeroMQ routing identities from a Jupyter message. */
export const JUPYTER_DELIMITER = '<IDS|MSG>';

/** The version of the Jupyter messaging protocol this package speaks. */
export const JUPYTER_PROTOCOL_VERSION = '5.3';

/** A Jupyter message header, as it travels on the wire (snake_case field names). */
export interface JupyterHeader {
  readonly msg_id: string;
  readonly session: string;
  readonly username: string;
  readonly date: string;
  readonly msg_type: string;
  readonly version: string;
}

/**
 * One Jupyter message. `parentHeader` is `{}` when the message answers nothing (e.g. the kernel's
 * `starting` status). Content and metadata are untrusted JSON: read them with type checks.
 */
export interface JupyterMessage {
  readonly header: JupyterHeader;
  readonly parentHeader: Partial<JupyterHeader>;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly content: Readonly<Record<string, unknown>>;
  readonly buffers: readonly Buffer[];
}

/** Who sends a message: one session id per kernel connection. */
export interface JupyterSender {
  readonly session: string;
  readonly username: string;
}

/**
 * A new message with a fresh random `msg_id` and the current time. Does not sign anything; see
 * {@link encodeJupyterMessage}.
 */
export function createJupyterMessage(
  sender: JupyterSender,
  msgType: string,
  content: Readonly<Record<string, unknown>>,
  parentHeader: Partial<JupyterHeader> = {},
): JupyterMessage {
  return {
    header: {
      msg_id: randomUUID(),
      session: sender.session,
      username: sender.username,
      date: new Date().toISOString(),
      msg_type: msgType,
      version: JUPYTER_PROTOCOL_VERSION,
    },
    parentHeader,
    metadata: {},
    content,
    buffers: [],
  };
}

/**
 * HMAC-SHA256 (hex) over the four serialised JSON parts, in wire order. An empty key means an
 * unauthenticated connection, whose signature is the empty string.
 */
export function signJupyterParts(key: string, parts: readonly Buffer[]): string {
  if (key === '') return '';
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest('hex');
}

/**
 * The frames to send on a DEALER socket: delimiter, signature, header, parent header, metadata,
 * content, then any binary buffers. Guarantees the signature covers exactly the bytes sent.
 */
export function encodeJupyterMessage(message: JupyterMessage, key: string): Buffer[] {
  const parts = [message.header, message.parentHeader, message.metadata, message.content].map((part) =>
    Buffer.from(JSON.stringify(part), 'utf8'),
  );
  return [Buffer.from(JUPYTER_DELIMITER), Buffer.from(signJupyterParts(key, parts)), ...parts, ...message.buffers];
}

/**
 * Parses received frames (any routing identities or PUB topic come before the delimiter).
 * Returns `undefined` for a frame list without a delimiter, with a wrong or missing signature, or
 * whose JSON is not an object with a usable header: such messages must be dropped, not trusted.
 */
export function decodeJupyterMessage(frames: readonly Buffer[], key: string): JupyterMessage | undefined {
  const delimiter = frames.findIndex(
    (frame) => frame.length === JUPYTER_DELIMITER.length && frame.toString() === JUPYTER_DELIMITER,
  );
  if (delimiter < 0 || frames.length < delimiter + 6) return undefined;
  const signature = frames[delimiter + 1] ?? Buffer.alloc(0);
  const parts = frames.slice(delimiter + 2, delimiter + 6);
  if (!signatureMatches(signature, signJupyterParts(key, parts))) return undefined;
  const [header, parentHeader, metadata, content] = parts.map(parseObject);
  if (header === undefined || parentHeader === undefined || metadata === undefined || content === undefined) {
    return undefined;
  }
  if (typeof header.msg_id !== 'string' || typeof header.msg_type !== 'string') return undefined;
  // The frames and their text are garbage once parsed: a large message's are given back soon.
  releaseLargeTransient(parts.reduce((total, part) => total + part.byteLength, 0));
  return {
    header: header as unknown as JupyterHeader,
    parentHeader: parentHeader as Partial<JupyterHeader>,
    metadata,
    content,
    buffers: frames.slice(delimiter + 6),
  };
}

function signatureMatches(received: Buffer, expected: string): boolean {
  const wanted = Buffer.from(expected);
  return received.length === wanted.length && timingSafeEqual(received, wanted);
}

function parseObject(frame: Buffer | undefined): Record<string, unknown> | undefined {
  if (frame === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(frame.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
