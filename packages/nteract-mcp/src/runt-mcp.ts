#!/usr/bin/env node
// The `runt-mcp` bin. It runs the child server from one bundled CommonJS file
// (`runt-mcp-bundled.cjs`, built with the package) compiled from a V8 code cache kept under the
// user cache dir: loading ~500 module files and compiling them is most of a child's start-up, and a
// restarted child is on the critical path of the agent's next call. A third-party plugin imports
// `@nteract-mcp/core` and `inversify` itself and must share the child's copies of them (core's
// classes are service identifiers), so with a plugin the child runs from the packages instead.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userCacheDir } from '@nteract-mcp/foundation';
import { namesPluginModules } from './plugin-module-specifiers.js';
import { type CompileCachedModule, requireWithCompileCache } from './require-with-compile-cache.js';

type ChildEntry = typeof import('./run-runt-mcp.js');

/** How long after start-up the code cache is written: time enough for the first requests' code. */
const compileCacheDelayMs = 2_000;

/**
 * The code cache is written {@link compileCacheDelayMs} after a start that found none, and again
 * when a child that served that long ends (its exit, or the proxy's SIGTERM, after which it still
 * ends by that signal): it has compiled more of its code than start-up did, e.g. the tools it ran.
 */
function keepCompileCache(bundled: CompileCachedModule): void {
  const startedAt = Date.now();
  const save = () => bundled.saveCompileCache();
  if (!bundled.fromCache) setTimeout(save, compileCacheDelayMs).unref();
  const saveAtEnd = () => {
    if (Date.now() - startedAt >= compileCacheDelayMs) save();
  };
  process.once('exit', saveAtEnd);
  process.once('SIGTERM', () => {
    process.removeListener('exit', saveAtEnd);
    saveAtEnd();
    process.kill(process.pid, 'SIGTERM');
  });
}

const argv = process.argv.slice(2);
let entry: ChildEntry;
if (namesPluginModules(argv, process.env)) {
  entry = await import('./run-runt-mcp.js');
} else {
  const bundled = requireWithCompileCache(
    fileURLToPath(new URL('./runt-mcp-bundled.cjs', import.meta.url)),
    join(userCacheDir(process.env), 'nteract-mcp', 'compile-cache'),
  );
  entry = bundled.exports as ChildEntry;
  keepCompileCache(bundled);
}
process.exit(await entry.runRuntMcp(argv, process.env));
