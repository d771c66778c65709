export { createLegacyTransportPlugin } from './create-legacy-transport-plugin.js';
export { defaultLegacyProtocolVersions, LegacyTransportOptions } from './legacy-transport-options.js';
