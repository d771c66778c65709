import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/nteract-mcp.ts'],
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: true,
  target: 'node20',
  removeNodeProtocol: false,
});
