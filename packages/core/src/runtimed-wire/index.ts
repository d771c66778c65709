export type { RuntimedConnectionOptions, RuntimedFrame } from './runtimed-connection.js';
export { assertSocketIsOurs, coreErrorFromFrame, RuntimedConnection } from './runtimed-connection.js';
export type { DecodedFrame } from './runtimed-frame-decoder.js';
export { encodeRuntimedFrame, RuntimedFrameDecoder } from './runtimed-frame-decoder.js';
export type {
  RuntimedErrorCode,
  RuntimedErrorFrame,
  RuntimedHandshake,
  WireCell,
  WireControlHello,
  WireDaemonEvent,
  WireDaemonInfo,
  WireNotebookConnected,
  WireNotebookRequestType,
  WireRoomEvent,
  WireRoomInfo,
  WireRuntimeState,
} from './runtimed-messages.js';
export {
  defaultMaxFrameBytes,
  maxHandshakeFrameBytes,
  runtimedMagic,
  runtimedPreamble,
  runtimedProtocolVersion,
} from './runtimed-wire-constants.js';
