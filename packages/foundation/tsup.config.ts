import { definePackageBuild } from '../../tsup.shared.js';

export default definePackageBuild({
  index: 'src/index.ts',
  'testing/index': 'src/testing/index.ts',
});
