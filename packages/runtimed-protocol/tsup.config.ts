import { definePackageBuild } from '../../tsup.shared.js';

// `output-edit` and `source-edit` have their own entries: the live page's browser bundle applies
// output and source edits without the schemas.
export default definePackageBuild(['src/index.ts', 'src/output-edit.ts', 'src/source-edit.ts']);
