// A plugin module (loaded by runt-mcp through NTERACT_MCP_PLUGINS, as any third-party plugin is)
// that adds the conformance suite's fixture tool `test_missing_capability` to nteract's child.
// The suite calls it without declaring `sampling`; what it checks is nteract's own rule that a
// tool needing a client capability the request did not declare is refused -32021 with
// `data.requiredCapabilities`, before it runs. Test-only: the shipped bins never load it.
import { ChildToolContribution, defineChildTool, definePlugin, textResult } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { z } from 'zod';

const missingCapabilityTool = defineChildTool({
  name: 'test_missing_capability',
  description: 'Conformance fixture: needs the client sampling capability; refused -32021 without it.',
  inputSchema: z.object({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  requiredClientCapabilities: { sampling: {} },
  handler: async () => textResult('the client declared sampling'),
});

export function createPlugin() {
  return definePlugin({
    id: 'test.conformance-fixtures',
    module: new ContainerModule(({ bind }) => {
      bind(ChildToolContribution).toConstantValue({
        id: 'test.conformance-fixtures',
        specificationVersion: 'v1',
        tools: () => [missingCapabilityTool],
      });
    }),
  });
}
