import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BlobReference,
  isBlobReference,
  type RuntimedConnection,
  type RuntimedFrame,
  readBlobText,
} from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

// A real daemon and a real Python kernel: a peer that asks for blob references gets a reference in
// place of each output value over the blob threshold (1 MiB), everywhere the daemon sends it; a
// peer that does not gets the texts, as before.

const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0)) await daemon.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const chars = 1_500_000;
const source = [
  'from IPython.display import display',
  `display({'text/plain': 'x' * ${chars}}, raw=True)`,
  `print('y' * ${chars}, end='')`,
].join('\n');

/** A peer of `path`'s room, with every broadcast it is sent. */
async function joinRoom(daemon: TestDaemon, path: string, blobReferences: boolean) {
  const { connection, greeting } = await daemon.connect({
    channel: 'notebook',
    mode: 'open',
    path,
    peer_label: blobReferences ? 'reads-blobs' : 'reads-texts',
    ...(blobReferences ? { blob_references: true as const } : {}),
  });
  connections.push(connection);
  const broadcasts: RuntimedFrame[] = [];
  connection.onFrame((frame) => {
    if (frame.type === 'broadcast') broadcasts.push(frame);
  });
  return { connection, greeting, broadcasts };
}

describe('blob references on the notebook wire', () => {
  it('sends a peer that asks for them references it can read from the named directory, and any other peer the texts', async () => {
    const daemon = await startTestDaemon();
    daemons.push(daemon);
    const dir = mkdtempSync(join(tmpdir(), 'rtd-blobs-'));
    dirs.push(dir);
    const path = join(dir, 'large.ipynb');
    const reader = await joinRoom(daemon, path, true);
    const other = await joinRoom(daemon, path, false);
    const blobDir = reader.greeting.blob_dir as string;
    expect(blobDir).toBe(join(daemon.dataDir, 'blobs'));
    expect(other.greeting.blob_dir).toBeUndefined();

    const { cell } = (await reader.connection.request({ type: 'insert_cell', source })) as { cell: { id: string } };
    const started = await reader.connection.request({ type: 'execute_cell', cell_id: cell.id });
    const doneOf = (broadcasts: RuntimedFrame[]) =>
      broadcasts.find((frame) => frame.event === 'execution_done' && frame.execution_id === started.execution_id);
    await expect
      .poll(() => doneOf(reader.broadcasts) !== undefined && doneOf(other.broadcasts) !== undefined, {
        timeout: 120_000,
        interval: 50,
      })
      .toBe(true);

    // The display, whole when set, is a reference at once for the reader and its text for the other.
    const displayOf = (broadcasts: RuntimedFrame[]) => {
      const set = broadcasts.find((frame) => frame.event === 'output_set') as {
        output: { data: Record<string, unknown> };
      };
      return set.output.data['text/plain'];
    };
    const reference = displayOf(reader.broadcasts);
    expect(isBlobReference(reference)).toBe(true);
    expect((reference as BlobReference).chars).toBe(chars);
    expect(readBlobText(blobDir, reference as BlobReference)).toBe('x'.repeat(chars));
    expect(displayOf(other.broadcasts)).toBe('x'.repeat(chars));

    // The end names the outputs now in blobs (the stream too) for the reader only.
    const readerDone = doneOf(reader.broadcasts) as RuntimedFrame;
    const blobOutputs = readerDone.blob_outputs as { index: number; output: Record<string, unknown> }[];
    expect(blobOutputs.map((entry) => entry.index)).toEqual([0, 1]);
    const stream = blobOutputs[1]?.output.text;
    expect(isBlobReference(stream)).toBe(true);
    expect(readBlobText(blobDir, stream as BlobReference)).toBe('y'.repeat(chars));
    expect(doneOf(other.broadcasts)).not.toHaveProperty('blob_outputs');

    // Answers follow the same rule: the reader's cell holds references, the other's the texts.
    const outputsOf = async (connection: RuntimedConnection) =>
      (
        (await connection.request({ type: 'get_cell', cell_id: cell.id })).cell as {
          outputs: Record<string, unknown>[];
        }
      ).outputs;
    const [readerDisplay, readerStream] = (await outputsOf(reader.connection)) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(isBlobReference((readerDisplay.data as Record<string, unknown>)['text/plain'])).toBe(true);
    expect(isBlobReference(readerStream.text)).toBe(true);
    const [otherDisplay, otherStream] = (await outputsOf(other.connection)) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect((otherDisplay.data as Record<string, unknown>)['text/plain']).toBe('x'.repeat(chars));
    expect(otherStream.text).toBe('y'.repeat(chars));
  }, 180_000);
});
