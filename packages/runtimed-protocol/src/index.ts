export type { RuntimedSocketEnvironment } from './resolve-runtimed-socket-path.js';
export { resolveRuntimedSocketPath } from './resolve-runtimed-socket-path.js';
export type { RuntimedConnectionOptions, RuntimedFrame } from './runtimed-connection.js';
export { assertSocketIsOurs, errorFromFrame, RuntimedConnection } from './runtimed-connection.js';
export type { DecodedFrame, RuntimedDecoderLimits, RuntimedEncodeOptions } from './runtimed-frame-decoder.js';
export { encodeRuntimedFrame, RuntimedFrameDecoder, sniffMessageId } from './runtimed-frame-decoder.js';
export type {
  RuntimedErrorCode,
  RuntimedErrorFrame,
  RuntimedHandshake,
  WireCell,
  WireControlHello,
  WireControlRequestType,
  WireDaemonEvent,
  WireDaemonInfo,
  WireNotebookConnected,
  WireNotebookRequestType,
  WireOutput,
  WireRoomEvent,
  WireRoomInfo,
  WireRuntimeState,
} from './runtimed-messages.js';
export { wireControlRequestTypes, wireNotebookRequestTypes } from './runtimed-messages.js';
export type { RuntimedProtocolErrorKind, RuntimedProtocolErrorOptions } from './runtimed-protocol-error.js';
export { RuntimedProtocolError } from './runtimed-protocol-error.js';
export {
  defaultMaxFrameBytes,
  defaultMaxMessageBytes,
  maxHandshakeFrameBytes,
  runtimedChunkBytes,
  runtimedContinuationBit,
  runtimedMagic,
  runtimedPreamble,
  runtimedProtocolVersion,
} from './runtimed-wire-constants.js';
