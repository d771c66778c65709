export type { BlobReference } from './blob-reference.js';
export { blobFilePath, blobReferenceKey, isBlobReference, lostBlobText, readBlobText } from './blob-reference.js';
export type { KernelEnvironment } from './kernel-environment-of.js';
export {
  hostedTokenVariables,
  internalVariablePrefixes,
  isInternalVariable,
  kernelEnvironmentOf,
} from './kernel-environment-of.js';
export type { EditableOutput, OutputEdit, WireOutputEvent } from './output-edit.js';
export { applyOutputEdit, outputEditOf, outputEventOf } from './output-edit.js';
export type { RuntimedSocketEnvironment } from './resolve-runtimed-socket-path.js';
export { resolveRuntimedSocketPath } from './resolve-runtimed-socket-path.js';
export type { RuntimedConnectionOptions, RuntimedFrame, RuntimedRequestFrame } from './runtimed-connection.js';
export { assertSocketIsOurs, errorFromFrame, RuntimedConnection } from './runtimed-connection.js';
export type { DecodedFrame, RuntimedDecoderLimits, RuntimedEncodeOptions } from './runtimed-frame-decoder.js';
export { encodeRuntimedFrame, RuntimedFrameDecoder, sniffMessageId } from './runtimed-frame-decoder.js';
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
export type { ClientRequestCheck } from './schemas/check-client-request.js';
export { checkClientRequest } from './schemas/check-client-request.js';
export type { WireCheck } from './schemas/check-wire.js';
export { checkWire } from './schemas/check-wire.js';
export { describeWireIssue, describeWireValue, formatWirePath } from './schemas/describe-wire-issue.js';
export { parseFromDaemon } from './schemas/parse-from-daemon.js';
export type { RuntimedErrorCode, RuntimedErrorFrame } from './schemas/runtimed-error-frame.js';
export { runtimedErrorCodes, runtimedErrorFrameSchema } from './schemas/runtimed-error-frame.js';
export type { RuntimedHandshake, WireNotebookHandshake, WireNotebookMode } from './schemas/runtimed-handshake.js';
export {
  runtimedHandshakeSchema,
  wireControlHandshakeSchema,
  wireNotebookHandshakeSchema,
  wireNotebookHandshakeSchemas,
  wireNotebookIdPattern,
  wireNotebookModes,
  wirePeerLabelSchema,
} from './schemas/runtimed-handshake.js';
export type { WireCell, WireCellSource, WireCellType, WireOutput } from './schemas/wire-cell.js';
export {
  wireCellSchema,
  wireCellSourceSchema,
  wireCellTypeSchema,
  wireMetadataSchema,
  wireOutputSchema,
} from './schemas/wire-cell.js';
export type { WireClientContext } from './schemas/wire-client-context.js';
export { wireClientContextSchema } from './schemas/wire-client-context.js';
export type {
  WireCommentAction,
  WireCommentMessage,
  WireCommentRange,
  WireCommentThread,
  WireCommentThreadEvent,
} from './schemas/wire-comment.js';
export { maxCommentCharacters, maxCommentMessages, maxCommentThreads } from './schemas/wire-comment.js';
export type { WireControlAnswer } from './schemas/wire-control-answer.js';
export { wireControlAnswerSchemas } from './schemas/wire-control-answer.js';
export type { WireControlRequest, WireControlRequestType } from './schemas/wire-control-request.js';
export {
  wireControlRequestSchema,
  wireControlRequestSchemas,
  wireControlRequestTypes,
  wireRequestEnvelopeSchema,
} from './schemas/wire-control-request.js';
export type { WireDaemonEvent, WireDaemonEventName } from './schemas/wire-daemon-event.js';
export { wireDaemonEventSchema } from './schemas/wire-daemon-event.js';
export type { WireDaemonInfo, WireRoomInfo } from './schemas/wire-daemon-info.js';
export { wireDaemonInfoSchema, wireRoomInfoSchema } from './schemas/wire-daemon-info.js';
export type { WireExecutionState, WireFinalExecutionStatus } from './schemas/wire-execution-state.js';
export { wireExecutionStateSchema, wireFinalExecutionStatuses } from './schemas/wire-execution-state.js';
export type { WireControlHello, WireNotebookConnected } from './schemas/wire-greeting.js';
export { wireControlHelloSchema, wireNotebookConnectedSchema } from './schemas/wire-greeting.js';
export type { WireInputRequestEvent } from './schemas/wire-input-request.js';
export {
  wireInputReplyAnswerSchema,
  wireInputReplyRequestSchema,
  wireInputRequestEventSchema,
} from './schemas/wire-input-request.js';
export type { WireKernelspec } from './schemas/wire-kernelspec.js';
export { wireKernelspecSchema } from './schemas/wire-kernelspec.js';
export type { WireCellChange, WireNotebookAnswer } from './schemas/wire-notebook-answer.js';
export { wireCellChangeSchema, wireNotebookAnswerSchemas } from './schemas/wire-notebook-answer.js';
export type {
  WireNotebookRequest,
  WireNotebookRequestOf,
  WireNotebookRequestType,
} from './schemas/wire-notebook-request.js';
export {
  wireNotebookRequestSchema,
  wireNotebookRequestSchemas,
  wireNotebookRequestTypes,
} from './schemas/wire-notebook-request.js';
export type { WireRoomCondition, WireRoomConditionKind } from './schemas/wire-room-condition.js';
export { wireRoomConditionKinds, wireRoomConditionSchema } from './schemas/wire-room-condition.js';
export type { WireRoomClosed, WireRoomEvent, WireRoomEventName } from './schemas/wire-room-event.js';
export {
  wireCellSourceSetEventSchema,
  wireExecutionDoneEventSchema,
  wireExecutionOutputEventSchema,
  wireRoomCloseCodes,
  wireRoomClosedSchema,
  wireRoomEventNames,
  wireRoomEventSchema,
} from './schemas/wire-room-event.js';
export type { WireRuntimeState } from './schemas/wire-runtime-state.js';
export { wireRuntimeStateNames, wireRuntimeStateSchema } from './schemas/wire-runtime-state.js';
export type { SourceEditableCell } from './source-edit.js';
export { applyCellSource, cellSourceOf } from './source-edit.js';
