#!/usr/bin/env node
import { runRuntMcp } from './run-runt-mcp.js';

process.exit(await runRuntMcp(process.argv.slice(2), process.env));
