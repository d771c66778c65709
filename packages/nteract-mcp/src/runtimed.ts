#!/usr/bin/env node
// The distribution ships the daemon's own command line as its `runtimed` bin.
import '@nteract-mcp/daemon/runtimed';
