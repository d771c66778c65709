import type { JsonRpcRequest } from '@nteract-mcp/core';
import { quoteClientText } from '@nteract-mcp/foundation';
import type { ProxyFailure } from './to-proxy-wire-error.js';

/**
 * The failure of an upstream request the proxy refuses before looking at its method, if it does:
 * `params` that is not an object (-32602; MCP params are objects), an id already in use (`idInUse`:
 * by a pending request, one the proxy answers itself or a stream it holds; -32600), a `tools/call`
 * without params or without a non-empty string `params.name` (-32602). Pure.
 */
export function upstreamRequestRefusal(request: JsonRpcRequest, idInUse: boolean): ProxyFailure | undefined {
  if (Array.isArray(request.params)) {
    return {
      kind: 'invalid_params',
      message: `Invalid params: MCP request params must be a JSON object (named parameters), not an array (${quoteClientText(request.method)}).`,
    };
  }
  if (idInUse) {
    return {
      kind: 'invalid_request',
      message: `Invalid Request: the id ${JSON.stringify(request.id)} is already used by a request still in progress; use a new id for each request.`,
    };
  }
  if (request.method === 'tools/call') {
    const name = (request.params as { name?: unknown } | undefined)?.name;
    if (request.params === undefined)
      return {
        kind: 'invalid_params',
        message: 'Invalid params: tools/call needs params {"name": "<tool>", "arguments": {...}}; params is missing.',
      };
    if (typeof name !== 'string' || name.length === 0)
      return {
        kind: 'invalid_params',
        message: 'Invalid params: tools/call needs params.name, the name of the tool to call, as a non-empty string.',
      };
  }
  return undefined;
}
