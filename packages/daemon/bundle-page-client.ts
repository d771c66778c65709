import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { build } from 'esbuild';

/** The live page's files in `dist/page/`, as the page server serves them (see src/page/page-assets.ts). */
const pageDir = join('dist', 'page');

/**
 * Bundles the live page's client (`src/page/client/`, browser TypeScript and its stylesheet) into
 * `dist/page/live-page.js` and `live-page.css`, minified for current browsers. The libraries it
 * uses (CodeMirror, marked, DOMPurify, KaTeX, anser) are the package's devDependencies: they are
 * inside the bundle, never loaded at run time. Their licence notices go to the linked
 * `live-page.js.LEGAL.txt`: the comments they mark as legal, then each bundled package's licence.
 */
export async function bundlePageClient(packageDir: string): Promise<void> {
  const outdir = join(packageDir, pageDir);
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: { 'live-page': join('src', 'page', 'client', 'live-page.ts') },
    outdir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'linked',
    metafile: true,
    tsconfig: join('src', 'page', 'client', 'tsconfig.json'),
    logLevel: 'warning',
  });
  const notices = join(outdir, 'live-page.js.LEGAL.txt');
  const legalComments = existsSync(notices) ? readFileSync(notices, 'utf8') : '';
  const cssNotices = join(outdir, 'live-page.css.LEGAL.txt');
  const cssComments = existsSync(cssNotices) ? readFileSync(cssNotices, 'utf8') : '';
  rmSync(cssNotices, { force: true });
  const licences = bundledPackages(packageDir, Object.keys(result.metafile.inputs)).map(
    (pkg) => `${'-'.repeat(72)}\n${pkg.name} ${pkg.version} (${pkg.license})\n\n${pkg.licenseText}`,
  );
  writeFileSync(
    notices,
    [
      'Third-party software bundled in live-page.js and live-page.css (the runtimed live page).',
      '',
      legalComments,
      cssComments,
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
