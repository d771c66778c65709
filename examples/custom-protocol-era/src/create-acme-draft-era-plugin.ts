import { definePlugin, type McpPlugin, ProtocolAdmission } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { DraftInitializeAdmission } from './draft-initialize-admission.js';

/**
 * The plugin a third party ships: Acme's draft protocol era, one binding to core's
 * `ProtocolAdmission` point. List it before the legacy era's plugin (the eras are asked in
 * composition order, and the legacy era would take the draft's `initialize` too).
 */
export function createAcmeDraftEraPlugin(): McpPlugin {
  return definePlugin({
    id: 'acme.draft-era',
    module: new ContainerModule(({ bind }) => {
      bind(ProtocolAdmission).to(DraftInitializeAdmission).inSingletonScope();
    }),
  });
}
