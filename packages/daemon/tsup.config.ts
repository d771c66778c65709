import { definePackageBuild } from '../../tsup.shared.js';

export default definePackageBuild(
  { index: 'src/index.ts', runtimed: 'src/runtimed.ts', 'testing/index': 'src/testing/index.ts' },
  { entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' } },
);
