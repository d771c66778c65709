import type {
  AdmissionOpening,
  AdmissionRequest,
  ClientIdentity,
  ConnectionCheck,
  EraConnection,
  EraDialect,
  ReplayMessage,
  ServerDescription,
} from '@nteract-mcp/core';

import { carriesNativeEnvelope } from './carries-native-envelope.js';
import { legacyDialect } from './legacy-dialect.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A connection locked to the legacy era by its `initialize`. The era answers that `initialize`
 * itself (negotiated version, the server's capabilities, identity and instructions) and serves
 * once the client sent `notifications/initialized`. A second `initialize`, or a request carrying
 * a modern `_meta` envelope (no switching eras in place), is refused -32600. Results go out as
 * they are. A server started later behind it is given the captured `initialize` and
 * `notifications/initialized` again, and the client's resource subscriptions as
 * `resources/subscribe` requests. The child server speaks {@link legacyDialect} on it.
 */
export class LegacyConnection implements EraConnection {
  public readonly era = 'legacy';
  public readonly dialect: EraDialect = legacyDialect;
  public readonly protocolVersion: string;
  public readonly client: ClientIdentity | undefined;
  public readonly handshake: Readonly<Record<string, unknown>>;
  public readonly readyOn = 'notifications/initialized';
  /** {@link shapeResult} adds nothing to any result. */
  public readonly resultsAsIs = true;
  readonly #initializeParams: unknown;

  public constructor(request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription) {
    this.protocolVersion = opening.protocolVersion;
    this.client = opening.client;
    this.#initializeParams = request.params;
    this.handshake = Object.freeze({
      protocolVersion: opening.protocolVersion,
      capabilities: server.capabilities,
      serverInfo: {
        name: server.name,
        version: server.version,
        ...(server.title !== undefined ? { title: server.title } : {}),
      },
      ...(server.instructions !== undefined ? { instructions: server.instructions } : {}),
    });
  }

  public check(request: AdmissionRequest): ConnectionCheck {
    if (request.method === 'initialize') return { kind: 'reject', code: -32600, message: 'Already initialized.' };
    if (carriesNativeEnvelope(request.params)) {
      return {
        kind: 'reject',
        code: -32600,
        message: `Cannot switch protocol era in place: this connection was initialized with ${this.protocolVersion}; drop the io.modelcontextprotocol/* _meta envelope or open a new connection.`,
      };
    }
    return { kind: 'serve' };
  }

  /** The legacy era adds nothing to a result: it is returned itself, so a relay may pass it on as it came. */
  public shapeResult(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
    return result as Record<string, unknown>;
  }

  public requestParams(params: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
    return params === undefined ? undefined : { ...params };
  }

  /** The capabilities the client declared in its `initialize`; they hold for the whole connection. */
  public clientCapabilities(): Readonly<Record<string, unknown>> | undefined {
    const declared = (this.#initializeParams as { capabilities?: unknown } | undefined)?.capabilities;
    return typeof declared === 'object' && declared !== null && !Array.isArray(declared)
      ? (declared as Record<string, unknown>)
      : undefined;
  }

  /** The server's `serverInfo`, `capabilities` and `instructions` from its `initialize` result. */
  public describedBy(message: ReplayMessage, result: unknown): ServerDescription | undefined {
    if (
      message.method !== 'initialize' ||
      !isRecord(result) ||
      !isRecord(result.serverInfo) ||
      !isRecord(result.capabilities)
    )
      return undefined;
    const { name, version, title } = result.serverInfo;
    if (typeof name !== 'string' || typeof version !== 'string') return undefined;
    return {
      name,
      version,
      ...(typeof title === 'string' ? { title } : {}),
      capabilities: result.capabilities,
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
  }

  /** A `resources/subscribe` for each URI, `meta` in its `_meta`. */
  public subscriptionReplay(
    uris: readonly string[],
    meta: Readonly<Record<string, unknown>>,
  ): readonly ReplayMessage[] {
    return uris.map((uri) => ({ request: true, method: 'resources/subscribe', params: { uri, _meta: { ...meta } } }));
  }

  public replay(): readonly ReplayMessage[] {
    return [
      { request: true, method: 'initialize', params: this.#initializeParams },
      { request: false, method: 'notifications/initialized' },
    ];
  }
}
