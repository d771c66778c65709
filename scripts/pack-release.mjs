#!/usr/bin/env node
// Builds every package under packages/ and packs each into one directory, ready for
// `npm install -g ./release/*.tgz` (all of them in one command) or `npm publish <tarball>`. Node
// built-ins only. The tarballs of these packages at other versions are removed from that directory.
//
//   node scripts/pack-release.mjs [--out DIR] [--no-build]   (npm run pack:release)
//
// It prints the tarballs' absolute paths on stdout, one a line (its own messages go to stderr).
// Each package's `prepack`/`postpack` scripts call this file with `--prepack`/`--postpack` in the
// package's directory: the root LICENSE is copied in for the tarball and removed afterwards, and a
// package without its README.md stops the pack with a message naming it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const licenseMarker = '.license-copied-by-pack-release';

function say(message) {
  process.stderr.write(`[pack-release] ${message}\n`);
}

/** The publishable packages: every `packages/*` whose package.json is not private, in directory order. */
export function releasePackages(dir = root) {
  const found = [];
  for (const name of readdirSync(join(dir, 'packages')).sort()) {
    const manifestPath = join(dir, 'packages', name, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (manifest.private === true) continue;
    found.push({ dir: join('packages', name), name: manifest.name, version: manifest.version });
  }
  return found;
}

/** `prepack`, in a package's directory: its README must be there; the root LICENSE is copied in. */
export function preparePackage(packageDir) {
  if (!existsSync(join(packageDir, 'README.md'))) {
    throw new Error(`${packageDir} has no README.md: every published package ships one (write it, then pack again)`);
  }
  const license = join(packageDir, 'LICENSE');
  if (!existsSync(license)) {
    copyFileSync(join(root, 'LICENSE'), license);
    copyFileSync(join(root, 'LICENSE'), join(packageDir, licenseMarker));
  }
}

/** `postpack`: removes the LICENSE that `prepack` copied (a package's own LICENSE stays). */
export function cleanPackage(packageDir) {
  if (!existsSync(join(packageDir, licenseMarker))) return;
  rmSync(join(packageDir, 'LICENSE'), { force: true });
  rmSync(join(packageDir, licenseMarker), { force: true });
}

/** Built files a package's tarball must hold besides `dist/` (the daemon serves its live page from these). */
const builtFiles = {
  '@nteract-mcp/daemon': ['dist/page/live-page.js', 'dist/page/live-page.css', 'dist/page/live-page.js.LEGAL.txt'],
};

/** What the file `npm pack` makes of a package starts with: `@scope/name` → `scope-name-`. */
function tarballPrefix(name) {
  return `${name.replace(/^@/, '').replace('/', '-')}-`;
}

/**
 * The tarballs among `files` that `npm pack` made of these packages at any version (`@scope/name`
 * packs as `scope-name-<version>.tgz`), so that `release/*.tgz` holds one version of each package
 * and `npm install -g ./release/*.tgz` installs exactly what was packed last. Other files stay.
 */
export function staleTarballs(files, packages) {
  const prefixes = packages.map((pkg) => tarballPrefix(pkg.name));
  return files.filter((file) =>
    prefixes.some((prefix) => file.startsWith(prefix) && /^\d+\.\d+\.\d+[^/]*\.tgz$/.test(file.slice(prefix.length))),
  );
}

function npm(args, options = {}) {
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 2],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    ...options,
  });
  if (result.error) throw result.error;
  return result;
}

/**
 * Packs every release package into `outDir` (created; the tarballs of these packages at any version
 * removed first) and returns the tarballs' absolute paths. Each tarball is checked to hold its package.json,
 * README.md, LICENSE and dist/ (the daemon's also its live page's client, dist/page/).
 */
export function packRelease(outDir, { build = true } = {}) {
  const packages = releasePackages();
  if (build) {
    say('building every package');
    const turbo = join(root, 'node_modules', '.bin', 'turbo');
    const built = spawnSync(turbo, ['run', 'build', '--output-logs=errors-only'], {
      cwd: root,
      stdio: ['ignore', 2, 2],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
    });
    if (built.status !== 0) throw new Error('the build failed');
  }
  mkdirSync(outDir, { recursive: true });
  const stale = staleTarballs(readdirSync(outDir), packages);
  for (const file of stale) rmSync(join(outDir, file));
  const current = new Set(packages.map((pkg) => `${tarballPrefix(pkg.name)}${pkg.version}.tgz`));
  const older = stale.filter((file) => !current.has(file));
  if (older.length > 0) say(`removed the tarballs of other versions: ${older.join(', ')}`);
  const result = npm([
    'pack',
    '--json',
    // No lifecycle banners; a failing prepack still prints its own message.
    '--silent',
    '--pack-destination',
    outDir,
    ...packages.flatMap((pkg) => ['--workspace', pkg.dir]),
  ]);
  if (result.status !== 0) throw new Error(`npm pack failed (exit ${result.status})`);
  const packed = JSON.parse(result.stdout);
  const tarballs = [];
  for (const pkg of packages) {
    const entry = packed.find((item) => item.name === pkg.name);
    if (!entry) throw new Error(`npm pack made no tarball for ${pkg.name}`);
    const paths = new Set(entry.files.map((file) => file.path));
    const missing = ['package.json', 'README.md', 'LICENSE', ...(builtFiles[pkg.name] ?? [])].filter(
      (path) => !paths.has(path),
    );
    if (![...paths].some((path) => path.startsWith('dist/'))) missing.push('dist/');
    if (missing.length > 0) throw new Error(`${entry.filename} lacks ${missing.join(', ')}`);
    tarballs.push(join(outDir, entry.filename));
  }
  return tarballs;
}

function main(argv) {
  const cwd = process.cwd();
  if (argv[0] === '--prepack') return preparePackage(cwd);
  if (argv[0] === '--postpack') return cleanPackage(cwd);
  let outDir = join(root, 'release');
  let build = true;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--out' && argv[index + 1]) outDir = resolve(argv[++index]);
    else if (arg === '--no-build') build = false;
    else throw new Error(`unknown argument ${arg}: usage: pack-release.mjs [--out DIR] [--no-build]`);
  }
  const tarballs = packRelease(outDir, { build });
  say(`${tarballs.length} tarballs in ${outDir}; install them together: npm install -g ${outDir}/*.tgz`);
  for (const tarball of tarballs) process.stdout.write(`${tarball}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
