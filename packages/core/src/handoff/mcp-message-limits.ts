/**
 * How large one MCP message may be on the way to the agent's client. The MCP SDK's stdio transport
 * buffers at most 10 MiB of unread input and drops the connection past it; the buffer holds the
 * line being read plus the rest of the chunk it arrived in (a pipe read is at most 64 KiB), so a
 * line must stay clearly below 10 MiB. Every stage keeps a margin inside the next one:
 * tool result budget (8 MiB) < child's hard limit < proxy's upstream limit < the client's 10 MiB.
 */

/** The MCP SDK's stdio read buffer (`STDIO_DEFAULT_MAX_BUFFER_SIZE`): 10 MiB. */
export const mcpClientBufferBytes = 10 * 1024 * 1024;

/** Largest line the proxy writes to its client by default: 10 MiB minus 256 KiB. */
export const defaultMaxUpstreamMessageBytes = mcpClientBufferBytes - 256 * 1024;

/**
 * Largest JSON-RPC line the child writes by default: 10 MiB minus 512 KiB, so what the proxy adds
 * (its own ids, a banner) still fits under {@link defaultMaxUpstreamMessageBytes}.
 */
export const defaultMaxChildMessageBytes = mcpClientBufferBytes - 512 * 1024;

/**
 * The child's stdin buffer: the proxy forwards request lines of up to 16 MiB (its upstream line
 * cap), so the child reads up to 17 MiB instead of the SDK's default 10 MiB, which would close its
 * transport on a large request (say, a cell source of 12 MB).
 */
export const defaultChildInputBufferBytes = 17 * 1024 * 1024;

/**
 * The size a tool result aims to stay under, measured as its serialized JSON (8 MiB): the tools
 * cut what does not fit and say so, well before the child's hard limit.
 */
export const defaultToolResultBudgetBytes = 8 * 1024 * 1024;

/** `bytes` in MiB with up to two decimals, for messages: `10 MiB`, `9.75 MiB`. */
export function describeMiB(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MiB`;
}
