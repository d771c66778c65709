// Preload for `node --import`: lets @modelcontextprotocol/conformance 0.2.x load on Node 20.
//
// The suite's bundle imports `globSync` from `fs` at top level. Node 20 has no `fs.globSync`
// (added in Node 22), so the import fails before any command runs, although only `tier-check`
// ever calls it. On such a Node this registers `resolve-fs.mjs`, which hands the suite's `fs`
// imports a module that is `node:fs` plus a small `globSync`. On a Node that has `fs.globSync`
// it does nothing.
import * as fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./resolve-fs.mjs', import.meta.url);
