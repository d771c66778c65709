import { defineConfig } from 'tsup';

/**
 * The shared package build, plus the test-only child bin, which takes the distribution's
 * composition from the `nteract-mcp` package at run time (kept external, never bundled).
 */
export default defineConfig({
  entry: ['src/index.ts', 'src/main.ts', 'src/archive-child.ts'],
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: true,
  target: 'node20',
  removeNodeProtocol: false,
  external: ['nteract-mcp'],
});
