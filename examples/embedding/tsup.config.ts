import { definePackageBuild } from '../../tsup.shared.js';

/** The library (the tool and its plugin) and the server itself (`main`, an MCP server on stdio). */
export default definePackageBuild({ index: 'src/index.ts', main: 'src/main.ts' });
