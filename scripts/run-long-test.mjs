#!/usr/bin/env node
// Runs the long variant of a size-scaled test with vitest (Node built-ins only):
//
//   node scripts/run-long-test.mjs soak   test/soak.test.ts with SOAK_CALLS=10000
//   node scripts/run-long-test.mjs fuzz   test/fuzz.test.ts with FUZZ_RUNS=100000 and FUZZ_CONTINUE=1
//
// A size already set in the environment wins (e.g. SOAK_CALLS=2000 npm run test:soak); so do
// SOAK_SEED / FUZZ_SEED, to replay a run. The sizes change only how many calls or inputs are sent.
// Build first (npm run build): the tests run the shipped dist bins.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const variants = {
  soak: { file: 'test/soak.test.ts', env: { SOAK_CALLS: '10000' } },
  fuzz: { file: 'test/fuzz.test.ts', env: { FUZZ_RUNS: '100000', FUZZ_CONTINUE: '1' } },
};

const [name, ...args] = process.argv.slice(2);
const variant = variants[name];
if (!variant) {
  process.stderr.write('usage: node scripts/run-long-test.mjs <soak|fuzz> [vitest args…]\n');
  process.exit(2);
}
const vitest = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'vitest.cmd' : 'vitest');
const result = spawnSync(vitest, ['run', '--config', 'vitest.all.config.ts', variant.file, ...args], {
  cwd: root,
  stdio: 'inherit',
  env: { ...variant.env, ...process.env },
});
if (result.error) throw result.error;
process.exitCode = result.status ?? 1;
