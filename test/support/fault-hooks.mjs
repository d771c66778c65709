// Test-only fault hooks, loaded into the processes of a harness session with
// NODE_OPTIONS='--import=file:///…/test/support/fault-hooks.mjs' (startUserSession({ faultHooks: true })).
// The shipped bins never load or mention this file. Every hook is inert until the test writes a
// control file into `$HOME/.nteract-test-faults/` (the session's temp HOME), so a process of an
// unrelated HOME can never be affected. Which hooks arm depends on the process:
//
// runt-mcp.js (the child MCP server)
//   child-kill.json  {"point": "on-request" | "before-reply", "tool": "create_cell", "match"?: "text"}
//     One shot (the file is renamed to child-kill.fired.json by the process that fires it): on the
//     first `tools/call` of `tool` (whose arguments contain `match`, when given) the child SIGKILLs
//     itself, either as soon as the request line is read ("on-request": nothing of it ran) or just
//     before the reply to it is written ("before-reply": the call ran, its answer is lost).
//   SIGUSR2 makes the child exit with code 75 (the upgrade-handoff exit code) at once.
//
// runtimed.js start --foreground (the daemon itself, not its `start`/`stop` launcher commands)
//   daemon-events.json  {"mode": "drop" | "delay", "frames"?: ["event", "broadcast"], "ms"?: 1500}
//     While the file exists, daemon → client frames of those types (control-channel `event`s and
//     room `broadcast`s; default both) are dropped, or held `ms` and then written in order.
//   daemon-info.json  {"count"?: 1}
//     The next `count` answers to `get_daemon_info` (default 1) are replaced by an error frame on
//     the same, still open connection (the identity query fails; nothing disconnects). The file is
//     removed once used up.
//   disk.json  {"errno": "ENOSPC" | "EROFS", "under": "/abs/dir"}
//     While the file exists, every file opened for writing under `under` (fs/promises `open` with a
//     `w`, `a` or `+` flag: the notebook's atomic writes) fails with that errno, as on a full disk or
//     a read-only file system. The daemon's own data dir (its journal) is left alone.
//
// Every firing appends one JSON line to `$HOME/.nteract-test-faults/fired.log`.
import { appendFileSync, existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { Socket } from 'node:net';
import { basename, join } from 'node:path';

const home = process.env.HOME ?? '';
const controlDir = join(home, '.nteract-test-faults');
const script = basename(process.argv[1] ?? '');
const isChild = script === 'runt-mcp.js';
const isDaemon = script === 'runtimed.js' && process.argv.includes('start') && process.argv.includes('--foreground');

function fired(what) {
  try {
    appendFileSync(join(controlDir, 'fired.log'), `${JSON.stringify({ pid: process.pid, script, ...what })}\n`);
  } catch {
    // the session is being torn down
  }
}

function readControl(name) {
  const path = join(controlDir, name);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Takes a one-shot control file: true for exactly one caller across processes (atomic rename). */
function consume(name) {
  try {
    renameSync(join(controlDir, name), join(controlDir, name.replace(/\.json$/, '.fired.json')));
    return true;
  } catch {
    return false;
  }
}

if (home !== '' && isChild) {
  process.on('SIGUSR2', () => {
    fired({ hook: 'exit-75' });
    process.exit(75);
  });
  const doomed = new Set();
  let buffered = '';
  const inspect = (chunk) => {
    buffered += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const rule = readControl('child-kill.json');
      if (!rule || !line.includes('tools/call')) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message.method !== 'tools/call' || message.params?.name !== rule.tool) continue;
      if (rule.match && !JSON.stringify(message.params?.arguments ?? {}).includes(rule.match)) continue;
      if (!consume('child-kill.json')) continue;
      if (rule.point === 'before-reply') {
        doomed.add(JSON.stringify(message.id));
        fired({ hook: 'child-kill', point: 'armed-before-reply', id: message.id });
      } else {
        fired({ hook: 'child-kill', point: 'on-request', id: message.id });
        process.kill(process.pid, 'SIGKILL');
      }
    }
  };
  // Wrap the transport's stdin listener rather than adding one: adding a `data` listener would put
  // stdin in flowing mode before the MCP transport listens, and its first lines would be lost.
  const stdin = process.stdin;
  const wrapped = new WeakMap();
  for (const method of ['on', 'addListener', 'prependListener']) {
    const original = stdin[method].bind(stdin);
    stdin[method] = (event, listener) => {
      if (event !== 'data') return original(event, listener);
      const wrapper = (chunk) => {
        inspect(chunk);
        listener(chunk);
      };
      wrapped.set(listener, wrapper);
      return original(event, wrapper);
    };
  }
  for (const method of ['off', 'removeListener']) {
    const original = stdin[method].bind(stdin);
    stdin[method] = (event, listener) => original(event, wrapped.get(listener) ?? listener);
  }
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk, ...rest) => {
    if (doomed.size > 0) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        try {
          const message = JSON.parse(line);
          if (message.method === undefined && doomed.has(JSON.stringify(message.id))) {
            fired({ hook: 'child-kill', point: 'before-reply', id: message.id });
            process.kill(process.pid, 'SIGKILL');
          }
        } catch {
          // not a whole JSON line; write it
        }
      }
    }
    return write(chunk, ...rest);
  };
}

if (home !== '' && isDaemon) {
  const write = Socket.prototype.write;
  /** The one runtimed frame (4-byte big-endian length + UTF-8 JSON) a write carries, if it is exactly one. */
  const frameOf = (chunk) => {
    if (!Buffer.isBuffer(chunk) && !(chunk instanceof Uint8Array)) return undefined;
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length < 4 || bytes.readUInt32BE(0) !== bytes.length - 4) return undefined;
    try {
      return JSON.parse(bytes.subarray(4).toString('utf8'));
    } catch {
      return undefined;
    }
  };
  const encode = (frame) => {
    const body = Buffer.from(JSON.stringify(frame), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    return Buffer.concat([head, body]);
  };
  Socket.prototype.write = function hookedWrite(chunk, ...rest) {
    const frame = frameOf(chunk);
    if (frame && typeof frame === 'object') {
      if (frame.type === 'ok' && 'started_at' in frame && 'protocol_version' in frame && !('pong' in frame)) {
        const rule = readControl('daemon-info.json');
        if (rule) {
          const left = (rule.count ?? 1) - 1;
          if (left > 0) writeFileSync(join(controlDir, 'daemon-info.json'), JSON.stringify({ count: left }));
          else {
            try {
              unlinkSync(join(controlDir, 'daemon-info.json'));
            } catch {
              // already gone
            }
          }
          fired({ hook: 'daemon-info-fail', id: frame.id });
          const failure = encode({ type: 'error', id: frame.id, code: 'internal', message: 'fault injected: info' });
          return write.call(this, failure, ...rest);
        }
      }
      if (frame.type === 'event' || frame.type === 'broadcast') {
        const rule = readControl('daemon-events.json');
        if (rule && (rule.frames ?? ['event', 'broadcast']).includes(frame.type)) {
          if (rule.mode === 'drop') {
            fired({ hook: 'daemon-event-drop', type: frame.type, event: frame.event });
            return true;
          }
          if (rule.mode === 'delay') {
            fired({ hook: 'daemon-event-delay', type: frame.type, event: frame.event });
            setTimeout(() => {
              if (!this.destroyed && this.writable) write.call(this, chunk);
            }, rule.ms ?? 1500);
            return true;
          }
        }
      }
    }
    return write.call(this, chunk, ...rest);
  };
}

if (home !== '' && isDaemon) {
  const messages = { ENOSPC: 'no space left on device', EROFS: 'read-only file system' };
  const originalOpen = fsPromises.open;
  fsPromises.open = function hookedOpen(path, flags, ...rest) {
    const rule = readControl('disk.json');
    const target = String(path);
    if (rule && typeof flags === 'string' && /[wa+]/.test(flags) && target.startsWith(`${rule.under}/`)) {
      fired({ hook: 'disk-fail', errno: rule.errno, path: target });
      const error = new Error(`${rule.errno}: ${messages[rule.errno] ?? 'i/o error'}, open '${target}'`);
      Object.assign(error, { code: rule.errno, syscall: 'open', path: target });
      return Promise.reject(error);
    }
    return originalOpen.call(this, path, flags, ...rest);
  };
  // ESM importers of node:fs/promises (the daemon) see the hooked function too.
  syncBuiltinESMExports();
}
