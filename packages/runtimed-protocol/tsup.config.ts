import { definePackageBuild } from '../../tsup.shared.js';

// `output-edit` has its own entry: the live page's browser bundle applies output edits without the schemas.
export default definePackageBuild(['src/index.ts', 'src/output-edit.ts']);
