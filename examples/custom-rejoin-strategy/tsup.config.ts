import { definePackageBuild } from '../../tsup.shared.js';

export default definePackageBuild(['src/index.ts', 'src/main.ts'], { entry: 'src/index.ts' });
