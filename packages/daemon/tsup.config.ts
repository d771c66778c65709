import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleEntry } from '../../bundle-entry.shared.js';
import { definePackageBuild } from '../../tsup.shared.js';
import { bundlePageClient } from './bundle-page-client.js';

const packageDir = dirname(fileURLToPath(import.meta.url));

export default {
  ...definePackageBuild(
    { index: 'src/index.ts', runtimed: 'src/runtimed.ts', 'testing/index': 'src/testing/index.ts' },
    { entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' } },
  ),
  // The `runtimed` bin as one file over tsup's (the CLI and the daemon it starts both load it);
  // zeromq is a native addon, loaded from the package's dependencies. Then the live page's client
  // (browser code, bundled on its own into dist/page/).
  onSuccess: async () => {
    await bundleEntry({ packageDir, source: 'runtimed.ts', output: 'runtimed', format: 'esm', external: ['zeromq'] });
    await bundlePageClient(packageDir);
  },
};
