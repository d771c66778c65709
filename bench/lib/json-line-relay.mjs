// The floor of a relay that reads messages: a process that starts `node [flags] <entry> args…` and, both
// ways, splits lines, parses each one, gives requests ids of its own (and answers back their
// client's ids), and writes it out again, with nothing else: no validation, no ledger beyond an
// id map, no error handling. Benchmarks put it where nteract-mcp would be, beside the byte pipe.
import { spawn } from 'node:child_process';
import { mallocArenaEnvironment } from '@nteract-mcp/foundation';

// Node flags, the entry, its arguments: the child is started as `node` with them all.
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: ['pipe', 'pipe', 'inherit'],
  // As nteract-mcp spawns its child: the child's malloc arenas limited (this process runs as started).
  env: mallocArenaEnvironment(process.env),
});
const clientIds = new Map();
let nextId = 1;

function eachLine(input, onLine) {
  let rest = '';
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    const text = rest + chunk;
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      onLine(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
  });
}

eachLine(process.stdin, (line) => {
  const message = JSON.parse(line);
  if (message.id !== undefined && message.method !== undefined) {
    const id = nextId++;
    clientIds.set(id, message.id);
    message.id = id;
  }
  child.stdin.write(`${JSON.stringify(message)}\n`);
});
eachLine(child.stdout, (line) => {
  const message = JSON.parse(line);
  if (message.method === undefined && clientIds.has(message.id)) {
    const id = clientIds.get(message.id);
    clientIds.delete(message.id);
    message.id = id;
  }
  process.stdout.write(`${JSON.stringify(message)}\n`);
});
// The client closing its end closes the child's, as a pipe does: the child exits, then the relay.
process.stdin.once('end', () => child.stdin.end());
child.once('exit', (code) => process.exit(code ?? 1));
