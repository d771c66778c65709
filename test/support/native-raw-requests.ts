/** A JSON object as the raw requests send and answer it. */
type Json = Record<string, unknown>;

/** The transport of a connected client: what a raw request is sent on and its answer read from. */
interface ClientTransport {
  onmessage?: ((...delivered: never[]) => void) | undefined;
  send(message: never): Promise<void>;
}

/** Who the raw requests say they are: the 2026-07-28 envelope a client would add to each. */
export interface NativeEnvelope {
  readonly clientCapabilities: Json;
  readonly clientInfo: { readonly name: string; readonly version: string };
}

/**
 * Sends 2026-07-28 requests on `transport` past its connected client (with the per-request
 * envelope the client would add), so a test sees answers the client would act on by itself, such
 * as `input_required`, and writes the retries itself. Their answers are taken off the transport
 * before the client sees them; everything else reaches the client as before. Install it after the
 * client connected (the client sets the transport's `onmessage` on connect).
 */
export function nativeRawRequests(
  transport: ClientTransport,
  envelope: NativeEnvelope,
): (method: string, params: Json) => Promise<Json> {
  const waiting = new Map<string, (message: Json) => void>();
  let sent = 0;
  const toClient = transport.onmessage;
  transport.onmessage = (...delivered: never[]) => {
    const message = delivered[0] as Json;
    const answer = typeof message.id === 'string' ? waiting.get(message.id) : undefined;
    if (answer && !('method' in message)) {
      waiting.delete(message.id as string);
      answer(message);
      return;
    }
    toClient?.(...delivered);
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': envelope.clientCapabilities,
    'io.modelcontextprotocol/clientInfo': envelope.clientInfo,
  };
  return (method, params) => {
    sent += 1;
    const id = `raw-${sent}`;
    const answered = new Promise<Json>((resolve, reject) => {
      waiting.set(id, (message) =>
        message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result as Json),
      );
    });
    void transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } } as never);
    return answered;
  };
}
