import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { RecordingLogger } from '../testing/recording-logger.js';
import { BoundedMessageTransport } from './bounded-message-transport.js';

/** An inner transport that records what it was asked to send. */
function recordingTransport(): Transport & { sent: JSONRPCMessage[] } {
  const sent: JSONRPCMessage[] = [];
  return {
    sent,
    start: async () => undefined,
    close: async () => undefined,
    send: async (message) => {
      sent.push(message);
    },
  };
}

describe(BoundedMessageTransport, () => {
  it('passes messages within the limit, and replaces an answer over it by an error to the same id', async () => {
    const inner = recordingTransport();
    const logger = new RecordingLogger();
    const transport = new BoundedMessageTransport(inner, { maxMessageBytes: 1000, logger });
    const small: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: { content: [] } };
    const large: JSONRPCMessage = {
      jsonrpc: '2.0',
      id: 'r-2',
      result: { content: [{ type: 'text', text: 'x'.repeat(2000) }] },
    };
    await transport.send(small);
    await transport.send(large);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'y'.repeat(2000) } });
    expect(inner.sent).toEqual([
      small,
      {
        jsonrpc: '2.0',
        id: 'r-2',
        error: {
          code: -32603,
          message: `The answer is ${JSON.stringify(large).length} bytes (0 MiB), over the 1000-byte (0 MiB) limit of one MCP message, so it was not sent. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs without full_output.`,
        },
      },
    ]);
    expect(logger.records.map((record) => record.message)).toEqual([
      'replaced an answer over the message size limit by an error',
      'dropped a message over the message size limit',
    ]);
  });

  it('hands the inner transport’s messages, errors and close to the server', async () => {
    const inner = recordingTransport();
    const transport = new BoundedMessageTransport(inner);
    const seen: unknown[] = [];
    transport.onmessage = (message) => seen.push(message);
    transport.onerror = (error) => seen.push(error.message);
    transport.onclose = () => seen.push('closed');
    await transport.start();
    inner.onmessage?.({ jsonrpc: '2.0', id: 1, method: 'ping' });
    inner.onerror?.(new Error('boom'));
    inner.onclose?.();
    expect(seen).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'boom', 'closed']);
  });
});
