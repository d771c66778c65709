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
 * `nteract-mcp` (the proxy) as one minified file with its dependencies inside: a process that
 * forwards bytes loads only what it uses, in one module (a Node process pays in memory for every
 * module file it loads). The child (`runt-mcp`) stays unbundled: plugins it loads share its
 * packages.
 */
async function bundleProxyBin(): Promise<void> {
  const outfile = join(here, 'dist', 'nteract-mcp.js');
  await build({
    entryPoints: [join(here, 'src', 'nteract-mcp.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    sourcemap: true,
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

export default {
  ...definePackageBuild(['src/index.ts', 'src/nteract-mcp.ts', 'src/runt-mcp.ts', 'src/runtimed.ts'], {
    entry: 'src/index.ts',
  }),
  onSuccess: bundleProxyBin,
};
