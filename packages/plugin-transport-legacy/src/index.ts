export { createLegacyTransportPlugin } from './create-legacy-transport-plugin.js';
export { InitializeAdmission } from './initialize-admission.js';
export { defaultLegacyProtocolVersions, LegacyTransportOptions } from './legacy-transport-options.js';
