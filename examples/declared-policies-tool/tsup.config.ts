import { definePackageBuild } from '../../tsup.shared.js';

/** The library and the plugin module the shipped child loads (`plugin`, through `NTERACT_MCP_PLUGINS`). */
export default definePackageBuild({ index: 'src/index.ts', plugin: 'src/plugin.ts' });
