import type { ServerDescription } from '@nteract-mcp/core';

/** Reserved `_meta` keys of the 2026-07-28 per-request envelope. */
export const envelopeKeys = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  /** Optional: the least severe `notifications/message` level the request wants; absent, none. */
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** In `_meta` of every notification on a `subscriptions/listen` stream: the listen request's id. */
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  /** In `_meta` of every result. */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
});

/** JSON-RPC codes of the native era. */
export const nativeErrorCodes = Object.freeze({
  invalidParams: -32602,
  methodNotFound: -32601,
  unsupportedProtocolVersion: -32022,
  /** `MissingRequiredClientCapabilityError`: a request needs a capability its envelope does not declare. */
  missingClientCapability: -32021,
});

/** `{ name, version, title? }` of the server, as results carry it. */
export function serverInfo(server: ServerDescription): Record<string, unknown> {
  return {
    name: server.name,
    version: server.version,
    ...(server.title !== undefined ? { title: server.title } : {}),
  };
}
