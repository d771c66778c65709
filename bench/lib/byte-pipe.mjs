// The limit of one extra hop: a process that starts `node [flags] <entry> args…` and copies bytes both
// ways, parsing nothing. Benchmarks put it where nteract-mcp would be.
import { spawn } from 'node:child_process';
import { mallocArenaEnvironment } from '@nteract-mcp/foundation';

// Node flags, the entry, its arguments: the child is started as `node` with them all.
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: ['pipe', 'pipe', 'inherit'],
  // As nteract-mcp spawns its child: the child's malloc arenas limited (this process runs as started).
  env: mallocArenaEnvironment(process.env),
});
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.once('exit', (code) => process.exit(code ?? 1));
