/**
 * The local daemon's wire contract, shared by `runtimed` and its clients.
 *
 * A connection starts with a 5-byte preamble from the client: the magic `ntrd` and one protocol
 * version byte. Then both sides send messages, each one UTF-8 JSON value carried by one or more
 * frames. A frame is a 4-byte big-endian header and a body: the low 31 bits of the header are the
 * body's length, the top bit says "more of this message follows". A message is the concatenation
 * of its frames' bodies up to the first frame without that bit; its frames are sent back to back
 * (the frames of two messages never interleave). The client's first message names the channel
 * (the handshake). A message that fits one frame is encoded exactly as in protocol version 1, so
 * a peer of either version can read the other's `unsupported_protocol` answer.
 */
export const runtimedMagic: readonly number[] = Object.freeze([0x6e, 0x74, 0x72, 0x64]);

/**
 * The protocol version this code speaks. A daemon refuses any other with an error frame.
 * Version 2 added continuation frames (messages larger than one frame).
 */
export const runtimedProtocolVersion = 2;

/** Largest frame body a sender writes (1 MiB); a longer message is split into frames of this size. */
export const runtimedChunkBytes = 1024 * 1024;

/**
 * Largest frame body accepted by default (1 MiB, the chunk size); a bigger one breaks the
 * protocol and closes the connection.
 */
export const defaultMaxFrameBytes = runtimedChunkBytes;

/**
 * Largest message (all its frames together) by default: 256 MiB. A sender refuses to send a
 * bigger one (a daemon answers the request with `oversized_message` instead); a receiver skips
 * one and reports it, and the connection goes on.
 */
export const defaultMaxMessageBytes = 256 * 1024 * 1024;

/** Largest handshake message accepted (64 KiB). */
export const maxHandshakeFrameBytes = 64 * 1024;

/** The header bit that marks a frame as followed by more frames of the same message. */
export const runtimedContinuationBit = 0x8000_0000;

/** The 5 preamble bytes a client sends first. */
export function runtimedPreamble(version: number = runtimedProtocolVersion): Buffer {
  return Buffer.from([...runtimedMagic, version]);
}
