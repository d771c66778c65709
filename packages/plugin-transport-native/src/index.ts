export { createNativeTransportPlugin } from './create-native-transport-plugin.js';
export { envelopeKeys, nativeErrorCodes } from './native-envelope.js';
export { defaultNativeProtocolVersions, NativeTransportOptions } from './native-transport-options.js';
