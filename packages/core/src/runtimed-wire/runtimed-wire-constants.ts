/**
 * The local daemon's wire contract, shared by `runtimed` and its clients.
 *
 * A connection starts with a 5-byte preamble from the client: the magic `ntrd` and one protocol
 * version byte. Then both sides send frames: a 4-byte big-endian length and that many bytes of
 * UTF-8 JSON. The client's first frame names the channel (the handshake).
 */
export const runtimedMagic: readonly number[] = Object.freeze([0x6e, 0x74, 0x72, 0x64]);

/** The protocol version this code speaks. A daemon refuses any other with an error frame. */
export const runtimedProtocolVersion = 1;

/** Largest frame accepted by default (16 MiB); a bigger one is refused and the connection closed. */
export const defaultMaxFrameBytes = 16 * 1024 * 1024;

/** Largest handshake frame accepted (64 KiB). */
export const maxHandshakeFrameBytes = 64 * 1024;

/** The 5 preamble bytes a client sends first. */
export function runtimedPreamble(version: number = runtimedProtocolVersion): Buffer {
  return Buffer.from([...runtimedMagic, version]);
}
