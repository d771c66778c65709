import { chmodSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { definePackageBuild } from '../../tsup.shared.js';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = resolve(here, '..');

/**
 * The workspace packages from their TypeScript sources, so the bundler sees every module and can
 * leave out what the proxy never uses (the child server, zod schemas, the daemon protocol). They
 * are free of side effects but for core's contribution points, which register themselves on import.
 */
const workspaceSources: Plugin = {
  name: 'workspace-sources',
  setup(builder) {
    builder.onResolve({ filter: /^@nteract-mcp\/[a-z-]+$/ }, (args) => {
      const path = join(packagesDir, args.path.slice('@nteract-mcp/'.length), 'src', 'index.ts');
      return existsSync(path) ? { path, sideEffects: false } : undefined;
    });
    builder.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (args) => {
      if (!args.importer.startsWith(packagesDir)) return undefined;
      const path = resolve(dirname(args.importer), args.path.replace(/\.js$/, '.ts'));
      if (!existsSync(path)) return undefined;
      return { path, sideEffects: /[\\/]core[\\/]src[\\/]contributions[\\/]/.test(path) };
    });
  },
};

const shared: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: true,
  plugins: [workspaceSources],
  tsconfigRaw: { compilerOptions: { experimentalDecorators: true } },
  logLevel: 'warning',
};

/**
 * An entry as one minified ES module with its dependencies inside: a Node process pays in start-up
 * time and memory for every module file it loads. What the entry imports dynamically (`import()`)
 * goes to chunks of its own, `<output>-<hash>.js`, read only when first used.
 */
async function bundleModule(source: string, output: string): Promise<void> {
  await build({
    ...shared,
    entryPoints: { [output]: join(here, 'src', source) },
    outdir: join(here, 'dist'),
    chunkNames: `${output}-[hash]`,
    splitting: true,
    format: 'esm',
    // CommonJS dependencies bundled into an ES module still call `require` for Node built-ins.
    banner: {
      js: "import { createRequire as __nteractRequire } from 'node:module'; const require = __nteractRequire(import.meta.url);",
    },
  });
  chmodSync(join(here, 'dist', `${output}.js`), 0o755);
}

/**
 * An entry as one minified CommonJS file, `<output>.cjs`: a script V8 can compile from a code
 * cache on Node 20 (see require-with-compile-cache.ts), which an ES module cannot.
 */
async function bundleScript(source: string, output: string): Promise<void> {
  await build({
    ...shared,
    entryPoints: [join(here, 'src', source)],
    outfile: join(here, 'dist', `${output}.cjs`),
    format: 'cjs',
    define: { 'import.meta.url': '__nteractModuleUrl' },
    banner: { js: "const __nteractModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
}

/**
 * The proxy bin is bundled over tsup's output. The child's server is bundled next to its bin
 * (`runt-mcp.js` runs the bundle unless a third-party plugin is named: see runt-mcp.ts), and the
 * daemon's bin is bundled by its own package.
 */
async function bundleBins(): Promise<void> {
  await bundleModule('nteract-mcp.ts', 'nteract-mcp');
  await bundleScript('run-runt-mcp.ts', 'runt-mcp-bundled');
}

export default {
  ...definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts', 'src/runt-mcp.ts', 'src/runtimed.ts'], {
    entry: 'src/index.ts',
  }),
  onSuccess: bundleBins,
};
