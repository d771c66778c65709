// `node:fs` with a `globSync` for the one pattern shape the conformance suite uses
// (`globSync('**/checks.json', { cwd })` in `tier-check`): every file of that name under `cwd`,
// as paths relative to `cwd`. Any other pattern throws, so a new use in the suite shows at once.
import fs from 'node:fs';
import { join, relative } from 'node:path';

// biome-ignore lint/performance/noReExportAll: it stands in for node:fs, so it offers every export of it
export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const fileName = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern)?.[1];
  if (fileName === undefined) {
    throw new Error(`node20 shim: globSync supports only "**/<file name>" patterns, not ${JSON.stringify(pattern)}`);
  }
  const cwd = options.cwd ?? process.cwd();
  return fs
    .readdirSync(cwd, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name === fileName)
    .map((entry) => relative(cwd, join(entry.parentPath, entry.name)));
}
