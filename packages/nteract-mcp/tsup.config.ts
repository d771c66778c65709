import { definePackageBuild } from '../../tsup.shared.js';

export default definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts', 'src/runt-mcp.ts', 'src/runtimed.ts'], {
  entry: 'src/index.ts',
});
