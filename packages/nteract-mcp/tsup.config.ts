import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleEntry } from '../../bundle-entry.shared.js';
import { definePackageBuild } from '../../tsup.shared.js';

const packageDir = dirname(fileURLToPath(import.meta.url));

/**
 * The proxy bin is bundled over tsup's output. The child's server is bundled next to its bin
 * (`runt-mcp.js` runs the bundle unless a third-party plugin is named: see runt-mcp.ts). The
 * daemon's bin is bundled by its own package.
 */
async function bundleBins(): Promise<void> {
  await bundleEntry({ packageDir, source: 'nteract-mcp.ts', output: 'nteract-mcp', format: 'esm' });
  await bundleEntry({ packageDir, source: 'run-runt-mcp.ts', output: 'runt-mcp-bundled', format: 'cjs' });
}

export default {
  ...definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts', 'src/runt-mcp.ts', 'src/runtimed.ts'], {
    entry: 'src/index.ts',
  }),
  onSuccess: bundleBins,
};
