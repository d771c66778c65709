import { chmodSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';

// Bins bundled over tsup's output: a Node process pays in start-up time and memory for every
// module file it loads, and the product's processes start on the path of an agent's next call
// (a restarted child, an auto-started daemon).

const packagesDir = join(dirname(fileURLToPath(import.meta.url)), 'packages');

/**
 * The workspace packages from their TypeScript sources, so the bundler sees every module and can
 * leave out what an entry never uses (the proxy has no child server, zod schemas or daemon
 * protocol in it). They are free of side effects: nothing registers itself on import (core's
 * contribution points are a plain list), which test/architecture.test.ts checks.
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
      return { path, sideEffects: false };
    });
  },
};

export interface BundleEntryOptions {
  /** The package's directory; `source` is under its `src/`, the output under its `dist/`. */
  readonly packageDir: string;
  readonly source: string;
  /** The output's name without extension. */
  readonly output: string;
  /**
   * `esm`: `<output>.js`, an executable ES module; what it imports dynamically goes to chunks of
   * its own, `<output>-<hash>.js`, read only when first used. `cjs`: `<output>.cjs`, a script V8
   * can compile from a code cache on Node 20 (which an ES module cannot); `import.meta.url` works.
   */
  readonly format: 'esm' | 'cjs';
  /** Left to be loaded at run time from the package's dependencies (native addons). */
  readonly external?: readonly string[];
}

/** Bundles one entry, minified with a source map, its dependencies inside. */
export async function bundleEntry(options: BundleEntryOptions): Promise<void> {
  const dist = join(options.packageDir, 'dist');
  const shared: BuildOptions = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    minify: true,
    sourcemap: true,
    external: [...(options.external ?? [])],
    plugins: [workspaceSources],
    tsconfigRaw: { compilerOptions: { experimentalDecorators: true } },
    logLevel: 'warning',
  };
  const source = join(options.packageDir, 'src', options.source);
  if (options.format === 'cjs') {
    await build({
      ...shared,
      entryPoints: [source],
      outfile: join(dist, `${options.output}.cjs`),
      format: 'cjs',
      define: { 'import.meta.url': '__nteractModuleUrl' },
      banner: { js: "const __nteractModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    });
    return;
  }
  await build({
    ...shared,
    entryPoints: { [options.output]: source },
    outdir: dist,
    chunkNames: `${options.output}-[hash]`,
    splitting: true,
    format: 'esm',
    // CommonJS dependencies bundled into an ES module still call `require` for Node built-ins.
    banner: {
      js: "import { createRequire as __nteractRequire } from 'node:module'; const require = __nteractRequire(import.meta.url);",
    },
  });
  chmodSync(join(dist, `${options.output}.js`), 0o755);
}
