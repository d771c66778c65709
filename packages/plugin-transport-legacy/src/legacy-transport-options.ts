import { defineToken } from '@nteract-mcp/core';

/** The initialize-based protocol versions served, newest first. */
export interface LegacyTransportOptions {
  readonly protocolVersions: readonly string[];
}

export const LegacyTransportOptions = defineToken<LegacyTransportOptions>(
  'plugin-transport-legacy',
  'LegacyTransportOptions',
);

export const defaultLegacyProtocolVersions: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
]);
