import { definePackageBuild } from '../../tsup.shared.js';

/** The library, the self-checking demo (`main`) and the plugin module the shipped child loads (`plugin`). */
export default definePackageBuild({ index: 'src/index.ts', main: 'src/main.ts', plugin: 'src/plugin.ts' });
