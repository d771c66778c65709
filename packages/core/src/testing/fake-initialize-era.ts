import { ContainerModule } from 'inversify';
import {
  type AdmissionDecision,
  type AdmissionOpening,
  type AdmissionRequest,
  type EraConnection,
  ProtocolAdmission,
  readClientIdentity,
  type ServerDescription,
} from '../contributions/protocol-admission.js';
import { sdkDialect } from '../contributions/sdk-dialect.js';
import { definePlugin, type McpPlugin } from '../di/mcp-plugin.js';

/**
 * The smallest `initialize`-based era, for core's own tests of code behind the era gate (core
 * cannot load the transport plugins): it opens on any `initialize`, agrees to the version asked
 * for, answers with the server's description, serves after `notifications/initialized`, speaks
 * the SDK server's own dialect, and replays nothing. It validates nothing else; the real rules
 * are the transport plugins'.
 */
export class FakeInitializeEra implements ProtocolAdmission {
  public readonly id = 'test.initialize-era';
  public readonly specificationVersion = 'v2';
  public readonly era = 'fake-initialize';

  public admit(request: AdmissionRequest): AdmissionDecision {
    if (request.method !== 'initialize') return { kind: 'pass' };
    const params = (request.params ?? {}) as {
      protocolVersion?: unknown;
      clientInfo?: unknown;
      capabilities?: unknown;
    };
    const declared = params.capabilities;
    return {
      kind: 'open',
      protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-06-18',
      client: readClientIdentity(params.clientInfo),
      ...(typeof declared === 'object' && declared !== null
        ? { clientCapabilities: declared as Record<string, unknown> }
        : {}),
    };
  }

  public probe(): Record<string, unknown> {
    return {};
  }

  public open(_request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription): EraConnection {
    return {
      era: this.era,
      dialect: sdkDialect,
      protocolVersion: opening.protocolVersion,
      client: opening.client,
      handshake: {
        protocolVersion: opening.protocolVersion,
        capabilities: server.capabilities,
        serverInfo: { name: server.name, version: server.version },
      },
      readyOn: 'notifications/initialized',
      check: () => ({ kind: 'serve' }),
      shapeResult: (result) => ({ ...result }),
      requestParams: (params) => (params === undefined ? undefined : { ...params }),
      clientCapabilities: () => opening.clientCapabilities,
      replay: () => [],
    };
  }

  public refuseUnadmitted(): undefined {
    return undefined;
  }
}

/** A plugin contributing {@link FakeInitializeEra}. */
export function fakeInitializeEraPlugin(): McpPlugin {
  return definePlugin({
    id: 'test.initialize-era',
    module: new ContainerModule(({ bind }) => {
      bind(ProtocolAdmission).toConstantValue(new FakeInitializeEra());
    }),
  });
}
