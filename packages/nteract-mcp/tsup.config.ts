import { definePackageBuild } from '../../tsup.shared.js';

export default definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts'], { entry: 'src/index.ts' });
