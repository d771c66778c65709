import { defineConfig, type Options } from 'tsup';

/** The build every workspace package shares: ESM for Node 20 with `.d.ts`, `node:` imports kept. */
export function definePackageBuild(entry: Options['entry'] = ['src/index.ts'], dts: Options['dts'] = true) {
  return defineConfig({
    entry,
    format: ['esm'],
    dts,
    clean: true,
    sourcemap: true,
    target: 'node20',
    removeNodeProtocol: false,
  });
}
