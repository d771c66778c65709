// The limit of one extra hop: a process that starts `node <entry> args…` and copies bytes both
// ways, parsing nothing. Benchmarks put it where nteract-mcp would be.
import { spawn } from 'node:child_process';

const [entry, ...args] = process.argv.slice(2);
const child = spawn(process.execPath, [entry, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.once('exit', (code) => process.exit(code ?? 1));
