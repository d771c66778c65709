import { createAcmeDraftEraPlugin } from './create-acme-draft-era-plugin.js';
import { draftProtocolVersion } from './draft-initialize-admission.js';
import { startLineServer } from './start-line-server.js';

/** What a draft client met, line by line, on a child server with the draft era (and no other). */
export interface DraftEraReport {
  /** The `initialize` answer: the version, the server's name and capabilities (the child server's, but tasks). */
  readonly handshake: {
    readonly protocolVersion: unknown;
    readonly serverName: unknown;
    readonly capabilities: unknown;
  };
  /** The era that opened the connection, and the version, as the server logged them. */
  readonly opened: { readonly era: unknown; readonly protocolVersion: unknown } | undefined;
  /** Whether `session_status`, one of core's tools, answered with its result. */
  readonly toolAnswered: boolean;
  /** The JSON-RPC error code of each request the draft does not serve (`undefined`: it was served). */
  readonly refused: {
    /** A `tools/call` asking for a task (the era's check). */
    readonly taskCall: number | undefined;
    /** `tasks/list` (no task method in the dialect). */
    readonly tasksList: number | undefined;
    /** `resources/read` of a notebook nobody opened (the dialect's resource-not-found code). */
    readonly unknownResource: number | undefined;
    /** A second `initialize`. */
    readonly secondInitialize: number | undefined;
  };
  /** A 2025-11-25 `initialize` on a fresh connection, where the draft era is the only one: its refusal. */
  readonly otherVersion: { readonly code: number | undefined; readonly data: unknown };
}

const clientInfo = { name: 'acme-agent', version: '0.9.0' };

/**
 * Composes the draft era alone with core's child server and speaks to it in raw JSON-RPC lines as
 * a DRAFT-2027-01 client: `initialize`, `notifications/initialized`, a tool call, then each
 * request the draft does not serve. Then a 2025-11-25 client tries a fresh connection.
 */
export async function runDraftEraExample(): Promise<DraftEraReport> {
  const server = await startLineServer([createAcmeDraftEraPlugin()]);
  try {
    const initialize = { protocolVersion: draftProtocolVersion, capabilities: { elicitation: {} }, clientInfo };
    const handshake = (await server.ask(1, 'initialize', initialize)).result ?? {};
    await server.notify('notifications/initialized');
    const status = await server.ask(2, 'tools/call', { name: 'session_status', arguments: {} });
    const taskCall = await server.ask(3, 'tools/call', { name: 'session_status', arguments: {}, task: {} });
    const tasksList = await server.ask(4, 'tasks/list');
    const unknownResource = await server.ask(5, 'resources/read', { uri: 'nteract://notebook/nobody-opened-this' });
    const secondInitialize = await server.ask(6, 'initialize', initialize);
    return {
      handshake: {
        protocolVersion: handshake.protocolVersion,
        serverName: (handshake.serverInfo as { name?: unknown } | undefined)?.name,
        capabilities: handshake.capabilities,
      },
      opened: server.opened(),
      toolAnswered: status.result !== undefined && status.result.isError !== true,
      refused: {
        taskCall: taskCall.error?.code,
        tasksList: tasksList.error?.code,
        unknownResource: unknownResource.error?.code,
        secondInitialize: secondInitialize.error?.code,
      },
      otherVersion: await refusalOfOtherVersion(),
    };
  } finally {
    await server.close();
  }
}

/** What a 2025-11-25 `initialize` gets from a fresh server that has the draft era alone. */
async function refusalOfOtherVersion(): Promise<DraftEraReport['otherVersion']> {
  const server = await startLineServer([createAcmeDraftEraPlugin()]);
  try {
    const answer = await server.ask(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo });
    return { code: answer.error?.code, data: answer.error?.data };
  } finally {
    await server.close();
  }
}
