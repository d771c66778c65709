import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type SocketPathWatch, watchSocketPath } from './watch-socket-path.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function bound(): Promise<{ dir: string; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'wsp-'));
  const path = join(dir, 'sub', 'd.sock');
  mkdirSync(join(dir, 'sub'));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, path };
}

function lostReason(path: string, intervalMs = 50): { watch: Promise<SocketPathWatch>; lost: Promise<string> } {
  let report: (why: string) => void = () => undefined;
  const lost = new Promise<string>((resolve) => {
    report = resolve;
  });
  const watch = watchSocketPath(path, intervalMs, (why) => report(why));
  void watch.then((started) => cleanups.push(() => started.dispose()));
  return { watch, lost };
}

describe(watchSocketPath, () => {
  it('reports a removed socket directory', async () => {
    const { dir, path } = await bound();
    const { watch, lost } = lostReason(path);
    expect(await (await watch).isOurs()).toBe(true);
    rmSync(join(dir, 'sub'), { recursive: true });
    expect(await lost).toBe(`its socket ${path} was removed`);
  });

  it('reports a socket file replaced by another file', async () => {
    const { dir, path } = await bound();
    const { watch, lost } = lostReason(path);
    await watch;
    writeFileSync(join(dir, 'other'), 'x');
    renameSync(join(dir, 'other'), path);
    expect(await lost).toBe(`its socket ${path} was replaced by another file`);
    expect(await (await watch).isOurs()).toBe(false);
  });

  it('reports a socket replaced before the watch began (between bind and watch)', async () => {
    const { path } = await bound();
    rmSync(path);
    writeFileSync(path, 'x');
    const { lost } = lostReason(path);
    expect(await lost).toBe(`its socket ${path} was replaced by another file`);
  });

  it('with interval 0 does not watch, but still tells whether the path is ours', async () => {
    const { path } = await bound();
    let reported = false;
    const watch = await watchSocketPath(path, 0, () => {
      reported = true;
    });
    rmSync(path);
    expect(await watch.isOurs()).toBe(false);
    expect(reported).toBe(false);
  });
});
