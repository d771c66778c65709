/** The `_meta` keys whose presence marks a request of the per-request (native, 2026-07-28) era. */
const nativeEnvelopeKeys = ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientCapabilities'];

/**
 * `true` when the request's `params._meta` carries a key of the native envelope, valid or not:
 * such a request belongs to the native era (which judges it: -32602, -32022 or -32601), never to
 * legacy, whatever its method (an enveloped `initialize` included).
 */
export function carriesNativeEnvelope(params: unknown): boolean {
  const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  if (typeof meta !== 'object' || meta === null) return false;
  return nativeEnvelopeKeys.some((key) => key in meta);
}
