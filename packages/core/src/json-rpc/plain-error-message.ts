/** What the MCP SDK's `McpError` writes before its message, once per wrapping: `MCP error <code>: `. */
const sdkErrorPrefix = /^(?:MCP error -?\d+: )+/;

/**
 * `message` without the `MCP error <code>: ` the MCP SDK's `McpError` puts in front of its own
 * message (every such prefix at its start, as a re-thrown one stacks them). A JSON-RPC error
 * carries its code in `code`: a client that prints "MCP error <code>: <message>" would otherwise
 * show the prefix twice. Pure.
 */
export function plainErrorMessage(message: string): string {
  return message.startsWith('MCP error ') ? message.replace(sdkErrorPrefix, '') : message;
}

/**
 * A JSON-RPC error response with its `error.message` made plain ({@link plainErrorMessage});
 * `response` itself when there is nothing to take off (or it is not an error response). Pure.
 */
export function withPlainErrorMessage<M>(response: M): M {
  const error = (response as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return response;
  const message = (error as { message?: unknown }).message;
  if (typeof message !== 'string') return response;
  const plain = plainErrorMessage(message);
  return plain === message ? response : { ...response, error: { ...error, message: plain } };
}
