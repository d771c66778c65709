import { defineToken } from '@nteract-mcp/core';

/** The per-request protocol versions served, newest first. */
export interface NativeTransportOptions {
  readonly protocolVersions: readonly string[];
}

export const NativeTransportOptions = defineToken<NativeTransportOptions>(
  'plugin-transport-native',
  'NativeTransportOptions',
);

export const defaultNativeProtocolVersions: readonly string[] = Object.freeze(['2026-07-28']);
