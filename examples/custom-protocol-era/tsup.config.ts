import { definePackageBuild } from '../../tsup.shared.js';

/** The library and the self-checking demo (`main`). */
export default definePackageBuild({ index: 'src/index.ts', main: 'src/main.ts' });
