#!/usr/bin/env node
import { runOutlineServer } from './create-outline-server.js';

process.exit(await runOutlineServer());
