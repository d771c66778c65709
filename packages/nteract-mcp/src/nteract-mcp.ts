#!/usr/bin/env node
import { createRequire } from 'node:module';
import { runNteractMcp } from './run-nteract-mcp.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
process.exit(await runNteractMcp(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }, version));
