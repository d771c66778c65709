import {
  type AdmissionOpening,
  type AdmissionRequest,
  type ClientIdentity,
  type ConnectionCheck,
  type EraConnection,
  type EraDialect,
  type ProtocolEra,
  type ReplayMessage,
  type ServerDescription,
  tasksExtension,
} from '@nteract-mcp/core';
import { draftDialect } from './draft-dialect.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The server's capabilities without tasks, which the draft does not have: 2025-11-25's `tasks`
 * and the 2026-07-28 tasks extension are left out (a 2025-era client then never asks a tool for a
 * task, whatever the tool's `execution.taskSupport` says).
 */
function withoutTasks(capabilities: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { tasks: _tasks, extensions, ...rest } = capabilities;
  if (!isRecord(extensions)) return rest;
  const { [tasksExtension]: _extension, ...others } = extensions;
  return Object.keys(others).length > 0 ? { ...rest, extensions: others } : rest;
}

/**
 * A connection its `initialize` locked to Acme's draft. The era answers that `initialize` itself
 * (the draft version, the server's capabilities without tasks, its identity and instructions) and
 * the server serves once the client sent `notifications/initialized`, as on any initialize-based
 * connection. A second `initialize` is refused -32600, a `tools/call` asking for a task -32602.
 * Results go out as they are. Core's child server speaks {@link draftDialect} on it.
 */
export class DraftConnection implements EraConnection {
  /** The era's name, for logs and status (core never compares it). */
  public readonly era: ProtocolEra;
  /** How the child server asks the person, refuses unknown resources and (not) runs tasks here. */
  public readonly dialect: EraDialect = draftDialect;
  /** Always the draft's version: the era opens on nothing else. */
  public readonly protocolVersion: string;
  /** The client as its `initialize` named itself (the peer label is made from it). */
  public readonly client: ClientIdentity | undefined;
  /** The `initialize` result the era answers with; the server behind never sees `initialize`. */
  public readonly handshake: Readonly<Record<string, unknown>>;
  /** The server serves after this notification (a request sent earlier is served all the same). */
  public readonly readyOn = 'notifications/initialized';
  /** {@link shapeResult} adds nothing: a relay may pass a result's bytes on unread. */
  public readonly resultsAsIs = true;
  readonly #initializeParams: unknown;

  public constructor(
    era: ProtocolEra,
    request: AdmissionRequest,
    opening: AdmissionOpening,
    server: ServerDescription,
  ) {
    this.era = era;
    this.protocolVersion = opening.protocolVersion;
    this.client = opening.client;
    this.#initializeParams = request.params;
    this.handshake = Object.freeze({
      protocolVersion: opening.protocolVersion,
      capabilities: withoutTasks(server.capabilities),
      serverInfo: {
        name: server.name,
        version: server.version,
        ...(server.title !== undefined ? { title: server.title } : {}),
      },
      ...(server.instructions !== undefined ? { instructions: server.instructions } : {}),
    });
  }

  /** Serves every later request but a second `initialize` (-32600) and a call asking for a task (-32602). */
  public check(request: AdmissionRequest): ConnectionCheck {
    if (request.method === 'initialize') return { kind: 'reject', code: -32600, message: 'Already initialized.' };
    if (request.method === 'tools/call' && isRecord(request.params) && request.params.task !== undefined) {
      return {
        kind: 'reject',
        code: -32602,
        message: `${this.protocolVersion} has no tasks: send tools/call without params.task.`,
      };
    }
    return { kind: 'serve' };
  }

  /** Every result as it is (the same object, unchanged). */
  public shapeResult(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
    return result as Record<string, unknown>;
  }

  /** Requests sent on this connection's behalf carry their params unchanged. */
  public requestParams(params: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
    return params === undefined ? undefined : { ...params };
  }

  /**
   * The capabilities the client declared in its `initialize`, for every request of the
   * connection: core asks the person (`elicitation/create`) only when they include `elicitation`.
   */
  public clientCapabilities(): Readonly<Record<string, unknown>> | undefined {
    const declared = isRecord(this.#initializeParams) ? this.#initializeParams.capabilities : undefined;
    return isRecord(declared) ? declared : undefined;
  }

  /** What a server started later behind this connection is told first: the same `initialize`, then `notifications/initialized`. */
  public replay(): readonly ReplayMessage[] {
    return [
      { request: true, method: 'initialize', params: this.#initializeParams },
      { request: false, method: 'notifications/initialized' },
    ];
  }
}
