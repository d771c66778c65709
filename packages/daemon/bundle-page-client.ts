import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { build } from 'esbuild';

/** The live page's files in `dist/page/`, as the page server serves them (see src/page/page-assets.ts). */
const pageDir = join('dist', 'page');

/** The link every script of the page starts with, to the notices of what it bundles. */
const noticesBanner = '/*! For license information please see live-page.js.LEGAL.txt */';

/**
 * Bundles the live page's client (`src/page/client/`, browser TypeScript and its stylesheet) into
 * `dist/page/`, minified for current browsers: `live-page.js` (an ES module, what the first paint
 * needs), `live-page.css`, and the chunks it imports when it needs them (the cell editor's
 * CodeMirror, KaTeX for the first formula, code they share), all flat in `dist/page/` as the page
 * server serves them; `live-page.imports.json` lists the chunks `live-page.js` imports as it
 * starts, which the page's HTML asks for beside it (`modulepreload`). The libraries it uses
 * (CodeMirror, marked, DOMPurify, KaTeX, anser) are the package's devDependencies: they are inside
 * these files, never loaded from elsewhere. Their licence notices, for every script, go to
 * `live-page.js.LEGAL.txt` (each script links it): the comments they mark as legal, then each
 * bundled package's licence.
 */
export async function bundlePageClient(packageDir: string): Promise<void> {
  const outdir = join(packageDir, pageDir);
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: { 'live-page': join('src', 'page', 'client', 'live-page.ts') },
    outdir,
    bundle: true,
    format: 'esm',
    splitting: true,
    chunkNames: '[name]-[hash]',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'external',
    banner: { js: noticesBanner },
    metafile: true,
    tsconfig: join('src', 'page', 'client', 'tsconfig.json'),
    logLevel: 'warning',
  });
  const entry = result.metafile.outputs[join(pageDir, 'live-page.js').split(sep).join('/')];
  const startImports = (entry?.imports ?? [])
    .filter((imported) => imported.kind === 'import-statement')
    .map((imported) => basename(imported.path));
  writeFileSync(join(outdir, 'live-page.imports.json'), `${JSON.stringify(startImports)}\n`);
  // esbuild writes one `<output>.LEGAL.txt` per output with legal comments: they go into the one file.
  const legalComments = readdirSync(outdir)
    .filter((name) => name.endsWith('.LEGAL.txt'))
    .sort()
    .map((name) => {
      const path = join(outdir, name);
      const text = readFileSync(path, 'utf8');
      rmSync(path);
      return text;
    });
  const licences = bundledPackages(packageDir, Object.keys(result.metafile.inputs)).map(
    (pkg) => `${'-'.repeat(72)}\n${pkg.name} ${pkg.version} (${pkg.license})\n\n${pkg.licenseText}`,
  );
  writeFileSync(
    join(outdir, 'live-page.js.LEGAL.txt'),
    [
      'Third-party software bundled in the runtimed live page (live-page.js, the chunks it loads, live-page.css).',
      '',
      ...legalComments,
      ...licences,
    ].join('\n'),
  );
}

interface BundledPackage {
  readonly name: string;
  readonly version: string;
  readonly license: string;
  readonly licenseText: string;
}

/** The npm packages whose files are among `inputs` (paths relative to `packageDir`), with their licences. */
function bundledPackages(packageDir: string, inputs: readonly string[]): BundledPackage[] {
  const dirs = new Set<string>();
  for (const input of inputs) {
    const parts = input.split(/[\\/]/);
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) continue;
    const length = parts[at + 1]?.startsWith('@') ? 3 : 2;
    dirs.add(join(packageDir, ...parts.slice(0, at + length)));
  }
  return [...dirs]
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        license?: string;
      };
      const file = readdirSync(dir).find((name) => /^(licen[sc]e|copying)(\.|$)/i.test(name));
      const licenseText = file
        ? readFileSync(join(dir, file), 'utf8')
        : `(no licence file in the package; see ${relative(packageDir, dir).split(sep).join('/')})\n`;
      return {
        name: manifest.name,
        version: manifest.version,
        license: manifest.license ?? 'unknown',
        licenseText,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}
