import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { probeProcess } from '../process/probe-process.js';
import { KernelRecords } from './kernel-records.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'krec-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A stand-in kernel: its own process group, like a real one, with a connection file in a private dir. */
async function fakeKernel(
  root: string,
): Promise<{ child: ChildProcess; file: string; dir: string; exited: Promise<unknown> }> {
  const dir = join(root, `nteract-kernel-${Math.random().toString(36).slice(2)}`);
  await mkdir(dir);
  const file = join(dir, 'kernel-x.json');
  writeFileSync(file, '{}');
  const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  cleanups.push(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  return { child, file, dir, exited };
}

describe(KernelRecords, { timeout: 60_000 }, () => {
  it('stops a recorded kernel left running by a dead daemon and removes its connection files', async () => {
    const root = scratch();
    const logger = new RecordingLogger();
    const records = new KernelRecords(join(root, 'kernels'), logger);
    const kernel = await fakeKernel(root);
    await records.add(kernel.child.pid as number, kernel.file, kernel.dir);
    expect(readdirSync(join(root, 'kernels'))).toEqual([`${kernel.child.pid}.json`]);

    const next = new KernelRecords(join(root, 'kernels'), logger);
    expect(await next.reapOrphans()).toEqual([kernel.child.pid]);
    await kernel.exited;
    expect(existsSync(kernel.dir)).toBe(false);
    expect(readdirSync(join(root, 'kernels'))).toEqual([]);
  });

  it('never signals a live process whose start time does not match the record (a reused pid)', async () => {
    const root = scratch();
    const records = new KernelRecords(join(root, 'kernels'));
    const unrelated = await fakeKernel(root);
    await mkdir(join(root, 'kernels'));
    const pid = unrelated.child.pid as number;
    writeFileSync(
      join(root, 'kernels', `${pid}.json`),
      JSON.stringify({ pid, start_time: 'proc:1', connection_file: unrelated.file, connection_dir: unrelated.dir }),
    );
    expect(await records.reapOrphans()).toEqual([]);
    expect((await probeProcess(pid)).kind).toBe('alive');
    expect(existsSync(unrelated.dir)).toBe(false);
    expect(readdirSync(join(root, 'kernels'))).toEqual([]);
  });

  it('forgets a kernel that exited normally, and only removes directories it made', async () => {
    const root = scratch();
    const records = new KernelRecords(join(root, 'kernels'));
    const kernel = await fakeKernel(root);
    await records.add(kernel.child.pid as number, kernel.file, kernel.dir);
    await records.remove(kernel.child.pid as number);
    expect(readdirSync(join(root, 'kernels'))).toEqual([]);

    const foreign = join(root, 'user-dir');
    await mkdir(foreign);
    writeFileSync(join(foreign, 'keep.txt'), 'x');
    writeFileSync(join(foreign, 'conn.json'), '{}');
    writeFileSync(
      join(root, 'kernels', '999999.json'),
      JSON.stringify({ pid: 999999, connection_file: join(foreign, 'conn.json'), connection_dir: foreign }),
    );
    writeFileSync(join(root, 'kernels', '5.json'), 'not json');
    expect(await records.reapOrphans()).toEqual([]);
    expect(await readFile(join(foreign, 'keep.txt'), 'utf8')).toBe('x');
    expect(existsSync(join(foreign, 'conn.json'))).toBe(false);
    expect(readdirSync(join(root, 'kernels'))).toEqual([]);
  });

  it('removes, at start, the connection directories left in the runtime dir without a record, and nothing else there', async () => {
    const root = scratch();
    const connections = join(root, 'run', 'kernels');
    await mkdir(connections, { recursive: true });
    const unrecorded = join(connections, 'nteract-kernel-abc');
    await mkdir(unrecorded);
    writeFileSync(join(unrecorded, 'kernel-1.json'), '{}');
    writeFileSync(join(connections, 'other.txt'), 'x');
    const records = new KernelRecords(join(root, 'kernels'), new RecordingLogger(), connections);
    expect(await records.reapOrphans()).toEqual([]);
    expect(readdirSync(connections)).toEqual(['other.txt']);
  });
});
