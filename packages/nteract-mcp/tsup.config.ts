import { chmodSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
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

/**
 * A bin as one minified file with its dependencies inside, written over tsup's output: a Node
 * process pays in start-up time and memory for every module file it loads. `external` stays
 * outside (loaded on demand).
 */
async function bundleBin(name: string, external: readonly string[] = []): Promise<void> {
  const outfile = join(here, 'dist', `${name}.js`);
  await build({
    entryPoints: [join(here, 'src', `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    sourcemap: true,
    external: [...external],
    plugins: [workspaceSources],
    tsconfigRaw: { compilerOptions: { experimentalDecorators: true } },
    // CommonJS dependencies bundled into an ES module still call `require` for Node built-ins.
    banner: {
      js: "import { createRequire as __nteractRequire } from 'node:module'; const require = __nteractRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  chmodSync(outfile, 0o755);
}

/**
 * Only the proxy: the child (`runt-mcp`) stays unbundled, because the plugins it loads must share
 * its copies of core and inversify (core's classes are service identifiers; a bundled copy of them
 * is another class to a plugin).
 */
async function bundleBins(): Promise<void> {
  await bundleBin('nteract-mcp');
}

export default {
  ...definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts', 'src/runt-mcp.ts', 'src/runtimed.ts'], {
    entry: 'src/index.ts',
  }),
  onSuccess: bundleBins,
};
