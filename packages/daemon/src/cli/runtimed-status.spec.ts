import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { RuntimedConnection, WireRoomInfo } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

const bin = join(import.meta.dirname, '..', '..', 'dist', 'runtimed.js');
const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

async function until<T>(read: () => Promise<T> | T, accept: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function status(d: TestDaemon, ...args: string[]) {
  return spawnSync(process.execPath, [bin, 'status', '--socket', d.socketPath, '--data-dir', d.dataDir, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('runtimed status against a real daemon', () => {
  it('lists the room with its peer, its running kernel and its last save, in text and in --json; the daemon logs the events', {
    timeout: 120_000,
  }, async () => {
    const d = await startTestDaemon(['--autosave-debounce-ms', '20', '--autosave-max-ms', '100']);
    daemons.push(d);
    const path = join(d.dir, 'status.ipynb');
    const { connection } = await d.connect({
      channel: 'notebook',
      mode: 'open',
      path,
      peer_label: 'Claude Code agent:ada:s1',
    });
    connections.push(connection);
    await connection.request({ type: 'insert_cell', source: 'secret_value = 41' });
    const rooms = async () => (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
    const [room] = await until(
      rooms,
      ([first]) => first?.runtime?.state === 'ready' && typeof first.last_saved?.at === 'string',
      'a ready kernel and a save',
    );
    const pid = room?.kernel_pid;
    expect(pid).toBeGreaterThan(0);

    const text = status(d);
    expect(text.status).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^runtimed \S+ running \(pid \d+, started \S+\)$/);
    expect(lines.slice(1, 9)).toEqual([
      `socket: ${d.socketPath}`,
      expect.stringMatching(/^page: http:\/\/127\.0\.0\.1:\d+\/ \('runtimed open' prints an address that opens it\)$/),
      'rooms: 1',
      `  ${path}  ${room?.notebook_id}`,
      '    peers: 1 (Claude Code agent:ada:s1)',
      expect.stringMatching(new RegExp(`^    kernel: ready, (idle|busy) \\(python3, pid ${pid}\\)$`)),
      `    last save: ${room?.last_saved?.at} to ${path}`,
      '',
    ]);

    const json = status(d, '--json');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      running: true,
      socket: d.socketPath,
      page: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/),
      rooms: [
        {
          notebook_id: room?.notebook_id,
          notebook_path: path,
          active_peers: 1,
          peer_labels: ['Claude Code agent:ada:s1'],
          runtime: { state: 'ready' },
          kernel_name: 'python3',
          kernel_pid: pid,
          last_saved: { at: room?.last_saved?.at, path },
        },
      ],
    });

    connection.close();
    await until(d.stderr, (log) => log.includes('peer vanished'), 'the vanished peer in the log');
    const log = d.stderr();
    for (const line of [
      /INFO \[runtimed:rooms\] room opened \{"notebookId":"[-0-9a-f]+","via":"path","path":"[^"]+status\.ipynb"/,
      /INFO \[runtimed:rooms:room:[0-9a-f]{8}\] peer joined \{"peer":"Claude Code agent:ada:s1","peers":1\}/,
      /INFO \[runtimed:rooms:room:[0-9a-f]{8}\] kernel starting \{"kernelspec":"python3"/,
      new RegExp(`INFO \\[runtimed:rooms:room:[0-9a-f]{8}\\] kernel started \\{"kernelspec":"python3","pid":${pid}\\}`),
      /INFO \[runtimed:rooms:room:[0-9a-f]{8}\] peer vanished \(its connection ended without leave\) \{"peer":"Claude Code agent:ada:s1","peers":0,"kernelKeptMs":180000\}/,
    ]) {
      expect(log).toMatch(line);
    }
    expect(log).not.toContain('secret_value');
  });
});
