import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRuntimedFrame, type RuntimedFrame, RuntimedFrameDecoder } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { runRuntimed } from './run-runtimed.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const notebookId = '6f1c2a9e-0000-4000-8000-000000000001';
const room = {
  notebook_id: notebookId,
  notebook_path: '/home/ada/a.ipynb',
  active_peers: 1,
  has_kernel: false,
  kernel_status: 'not_started',
  ephemeral: false,
};

/**
 * A control-channel stand-in for runtimed at `<dir>/run/d.sock` that answers with `answer`
 * (`undefined`: an error frame `unknown_request`, as an older daemon answers a request it lacks).
 */
async function scriptedDaemon(answer: (request: RuntimedFrame) => Record<string, unknown> | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'rtd-open-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'run'), { mode: 0o700 });
  const socketPath = join(dir, 'run', 'd.sock');
  const requests: RuntimedFrame[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    const decoder = new RuntimedFrameDecoder();
    let preamble = Buffer.alloc(0);
    let greeted = false;
    socket.on('data', (chunk: Buffer) => {
      let data = chunk;
      if (preamble.length < 5) {
        preamble = Buffer.concat([preamble, chunk]);
        if (preamble.length < 5) return;
        data = preamble.subarray(5);
      }
      for (const decoded of decoder.push(data)) {
        if (decoded.kind !== 'frame') return;
        const frame = decoded.value as RuntimedFrame;
        if (!greeted) {
          greeted = true;
          socket.write(
            encodeRuntimedFrame({
              type: 'hello',
              pid: 4242,
              started_at: '2026-01-01T00:00:00.000Z',
              version: '9.9.9',
              protocol_version: 1,
            }),
          );
          continue;
        }
        requests.push(frame);
        const fields = frame.type === 'list_rooms' ? { rooms: [room] } : answer(frame);
        socket.write(
          encodeRuntimedFrame(
            fields === undefined
              ? {
                  type: 'error',
                  id: frame.id,
                  code: 'unknown_request',
                  message: `Unknown control request '${String(frame.type)}'`,
                }
              : { ...fields, type: 'ok', id: frame.id },
          ),
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { dir, socketPath, requests };
}

/** Runs `runtimed` in this process with `env`, collecting what it writes. */
async function run(argv: readonly string[], env: Record<string, string | undefined> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runRuntimed(
    argv,
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      entry: '/nowhere/runtimed.js',
    },
    '0.0.0-test',
  );
  return { code, stdout, stderr };
}

let launches = 0;
/** What a daemon with launch addresses answers `get_page`: a new address each time. */
function launchPage(request: RuntimedFrame): Record<string, unknown> {
  const path = request.notebook_id === undefined ? '' : `notebooks/${String(request.notebook_id)}`;
  return {
    url: 'http://127.0.0.1:8765/',
    launch_url: `http://127.0.0.1:8765/${path}#launch=code-${++launches}&x="<y>"`,
  };
}

/** A stand-in `xdg-open` on a PATH of its own, which writes its arguments to `<dir>/xdg-open.args`. */
function fakeXdgOpen(dir: string): { path: string; args: string } {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const args = join(dir, 'xdg-open.args');
  writeFileSync(
    join(bin, 'xdg-open'),
    `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(`${args}.tmp`)}\nmv ${JSON.stringify(`${args}.tmp`)} ${JSON.stringify(args)}\n`,
  );
  chmodSync(join(bin, 'xdg-open'), 0o755);
  return { path: `${bin}:${process.env.PATH ?? ''}`, args };
}

async function waitForFile(path: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return readFileSync(path, 'utf8');
}

describe('runtimed open', () => {
  it('prints a launch address of the notebook it names (by path or id), asking get_page for that notebook, and no token', async () => {
    const d = await scriptedDaemon(launchPage);
    const byPath = await run(['open', '/home/ada/a.ipynb', '--socket', d.socketPath]);
    expect(byPath).toMatchObject({ code: 0 });
    expect(byPath.stdout).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:8765/notebooks/${notebookId}#launch=code-\\d+.*\\n$`),
    );
    expect(byPath.stdout).not.toContain('token');
    expect(byPath.stderr).toContain('opens the page once, within an hour');
    expect(d.requests.filter((request) => request.type === 'get_page')).toEqual([
      { type: 'get_page', notebook_id: notebookId, id: expect.any(Number) },
    ]);
    const index = await run(['open', '--socket', d.socketPath]);
    expect(index.stdout).toMatch(/^http:\/\/127\.0\.0\.1:8765\/#launch=code-\d+/);
    expect(d.requests.at(-1)).toEqual({ type: 'get_page', id: expect.any(Number) });
    expect(readdirSync(join(d.dir, 'run'))).toEqual(['d.sock']);
  });

  it('opens the page in a desktop session through a 0600 redirect file beside the socket, never with an address in xdg-open’s arguments', async () => {
    const d = await scriptedDaemon(launchPage);
    const stale = join(d.dir, 'run', 'runtimed-open-0badc0de.html');
    const fresh = join(d.dir, 'run', 'runtimed-open-0000beef.html');
    writeFileSync(stale, 'old');
    writeFileSync(fresh, 'recent');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    const xdg = fakeXdgOpen(d.dir);
    const opened = await run(['open', notebookId, '--socket', d.socketPath], { DISPLAY: ':0', PATH: xdg.path });
    expect(opened.code, opened.stderr).toBe(0);
    const args = (await waitForFile(xdg.args)).trim().split('\n');
    expect(args).toHaveLength(1);
    const file = args[0] as string;
    expect(file).toMatch(new RegExp(`^${join(d.dir, 'run')}/runtimed-open-[0-9a-f]+\\.html$`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A second address, not the one printed: each opens the page once.
    const printed = opened.stdout.trim();
    expect(d.requests.filter((request) => request.type === 'get_page')).toHaveLength(2);
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain(printed.replaceAll('&', '&#38;').replaceAll('"', '&#34;'));
    expect(html).toMatch(
      /<meta http-equiv="refresh" content="0;url=http:\/\/127\.0\.0\.1:8765\/notebooks\/[^"]*#launch=code-\d+&#38;x=&#34;&#60;y&#62;&#34;">/,
    );
    expect(html).toMatch(/<a href="http:\/\/127\.0\.0\.1:8765\/notebooks\/[^"<>]*">/);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  it('refuses a daemon that serves no page, or one too old for launch addresses, without building a token address', async () => {
    const none = await scriptedDaemon(() => ({ url: null, launch_url: null }));
    expect(await run(['open', '--socket', none.socketPath])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'runtimed: this daemon serves no web page (it was started with --no-page)\n',
    });
    const older = await scriptedDaemon(() => ({ url: 'http://127.0.0.1:8765/', token: 'f'.repeat(64) }));
    const refused = await run(['open', '--socket', older.socketPath], {
      DISPLAY: ':0',
      PATH: fakeXdgOpen(older.dir).path,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('older than one-time page addresses');
    expect(refused.stderr).not.toContain('f'.repeat(64));
  });

  it('exits 3 when no daemon runs, and 1 for a notebook that is not open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtd-open-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(await run(['open', '--socket', join(dir, 'none.sock')])).toMatchObject({ code: 3, stdout: '' });
    const d = await scriptedDaemon(launchPage);
    const missing = await run(['open', '/nowhere/missing.ipynb', '--socket', d.socketPath]);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('is not open in the daemon');
  });
});

describe('runtimed page --rotate', () => {
  it('asks the daemon to rotate the token and says every open page must be opened again', async () => {
    const d = await scriptedDaemon((request) => (request.type === 'rotate_page_token' ? { rotated: true } : undefined));
    expect(await run(['page', '--rotate', '--socket', d.socketPath])).toEqual({
      code: 0,
      stdout: "The page's token was rotated: every page open so far must be opened again (runtimed open).\n",
      stderr: '',
    });
    expect(d.requests).toEqual([{ type: 'rotate_page_token', id: expect.any(Number) }]);
  });

  it('exits 1 when the daemon serves no page or is older, 3 when none runs, 2 without --rotate', async () => {
    const none = await scriptedDaemon(() => ({ rotated: false }));
    const refused = await run(['page', '--rotate', '--socket', none.socketPath]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain('serves no web page');
    const older = await scriptedDaemon(() => undefined);
    const old = await run(['page', '--rotate', '--socket', older.socketPath]);
    expect(old).toMatchObject({ code: 1, stdout: '' });
    expect(old.stderr).toContain("older than 'runtimed page --rotate'");
    expect(await run(['page', '--rotate', '--socket', join(none.dir, 'none.sock')])).toMatchObject({ code: 3 });
    const usage = await run(['page', '--socket', none.socketPath]);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toContain("'runtimed page' needs --rotate");
  });
});
