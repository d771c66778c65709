#!/usr/bin/env node
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runRuntimed } from '@nteract-mcp/daemon';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
const code = await runRuntimed(
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env, entry: fileURLToPath(import.meta.url) },
  version,
);
process.exit(code);
