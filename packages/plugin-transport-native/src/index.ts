export { createNativeTransportPlugin } from './create-native-transport-plugin.js';
export { defaultNativeProtocolVersions, NativeTransportOptions } from './native-transport-options.js';
export { envelopeKeys, nativeErrorCodes, PerRequestAdmission } from './per-request-admission.js';
