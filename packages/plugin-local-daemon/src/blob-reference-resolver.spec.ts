import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonPort, Logger, type NotebookCell } from '@nteract-mcp/core';
import { createTestContainer, RecordingLogger } from '@nteract-mcp/core/testing';
import { type BlobReference, blobReferenceKey, type RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobReferenceResolver } from './blob-reference-resolver.js';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { scriptedRuntimedDaemon } from './testing/scripted-runtimed-daemon.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rtd-blobs-unit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Stores `text` in `dir` as the daemon does (named by the sha256 of its UTF-8) and gives its reference. */
function putBlob(dir: string, text: string): BlobReference {
  mkdirSync(dir, { recursive: true });
  const sha = createHash('sha256').update(text, 'utf8').digest('hex');
  writeFileSync(join(dir, sha), text);
  return { [blobReferenceKey]: sha, chars: text.length } as BlobReference;
}

const stream = (text: unknown) => ({ output_type: 'stream', name: 'stdout', text });
const display = (value: unknown) => ({ output_type: 'display_data', data: { 'text/plain': value }, metadata: {} });

function cell(outputs: NotebookCell['outputs']): NotebookCell {
  return { id: 'a', cellType: 'code', source: 'big()', outputs, executionCount: 1, metadata: {} };
}

describe(BlobReferenceResolver, () => {
  it('gives out each referenced value as its text, read from the named directory, and the rest as it is', () => {
    const dir = scratchDir();
    const printed = 'é'.repeat(1000);
    const shown = 'x'.repeat(2000);
    const small = stream('small\n');
    const outputs = [stream(putBlob(dir, printed)), small, display(putBlob(dir, shown))];
    const resolver = new BlobReferenceResolver(dir);
    expect(resolver.outputs(outputs)).toEqual([stream(printed), small, display(shown)]);
    expect(resolver.outputs(outputs)[1]).toBe(small);
    // What holds no reference is not copied.
    const plain = [small];
    expect(resolver.outputs(plain)).toBe(plain);
    const withoutReferences = cell(plain);
    expect(resolver.cell(withoutReferences)).toBe(withoutReferences);
    expect(resolver.withOutputs({ status: 'ok', outputs })).toEqual({
      status: 'ok',
      outputs: [stream(printed), small, display(shown)],
    });
  });

  it('says a blob is lost when its file is gone, naming it, instead of failing the read', () => {
    const dir = scratchDir();
    const reference = putBlob(dir, 'gone soon');
    rmSync(join(dir, reference.$nteract_blob));
    const [output] = new BlobReferenceResolver(dir).outputs([stream(reference)]);
    expect(output?.text).toBe(`[output data lost: its blob ${reference.$nteract_blob} is missing from ${dir}]`);
  });

  it('gives everything out as it is without a blob directory (a daemon that sends texts)', () => {
    const outputs = [stream({ [blobReferenceKey]: 'a'.repeat(64), chars: 3 })];
    expect(new BlobReferenceResolver(undefined).outputs(outputs)).toBe(outputs);
  });
});

describe('a notebook handle of a daemon that sends blob references', () => {
  it('hands out texts, and once a run ends holds its large values as references read from their blobs', async () => {
    const dir = scratchDir();
    const blobDir = join(dir, 'blobs');
    const socketPath = join(dir, 'd.sock');
    const printed = 'y'.repeat(5000);
    const shown = 'x'.repeat(5000);
    const shownReference = putBlob(blobDir, shown);
    const printedReference = putBlob(blobDir, printed);
    const execution = { execution_id: 'e1', cell_id: 'a' };
    const wireCell = (outputs: unknown[], count: number | null) => ({
      id: 'a',
      cell_type: 'code',
      source: 'big()',
      outputs,
      execution_count: count,
      metadata: {},
    });
    let daemonSide: { send(...frames: RuntimedFrame[]): void } | undefined;
    const daemon = await scriptedRuntimedDaemon(socketPath, {
      onHandshake: (connection) => {
        daemonSide = connection;
        connection.send({
          type: 'connected',
          notebook_id: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
          notebook_path: null,
          ephemeral: true,
          document_version: 0,
          cells: [wireCell([], null)],
          runtime: { state: 'ready', kernel_status: 'idle' },
          peer_id: 'p1',
          daemon_pid: 4242,
          daemon_started_at: '2026-01-01T00:00:00.000Z',
          blob_dir: blobDir,
        });
      },
      onRequest: (request, connection) => {
        const id = request.id as number;
        if (request.type === 'get_runtime')
          connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
        if (request.type === 'get_cells')
          connection.send({ type: 'ok', id, document_version: 0, cells: [wireCell([], null)] });
      },
    });
    cleanups.push(() => daemon.stop());
    const port = createTestContainer({ plugins: [createLocalDaemonPlugin({ socketPath })] })
      .override(Logger, new RecordingLogger())
      .build()
      .get(DaemonPort);
    const handle = await port.openNotebook('/abs/a.ipynb', { peerLabel: 'unit' });
    cleanups.push(() => handle.close());
    // A run: the display set as a reference, the stream built from its text, then the end naming both as blobs.
    daemonSide?.send(
      {
        type: 'broadcast',
        event: 'output_set',
        document_version: 1,
        ...execution,
        seq: 1,
        index: 0,
        output: display(shownReference),
      },
      {
        type: 'broadcast',
        event: 'output_set',
        document_version: 2,
        ...execution,
        seq: 2,
        index: 1,
        output: stream(printed),
      },
      {
        type: 'broadcast',
        event: 'execution_done',
        ...execution,
        status: 'ok',
        execution_count: 1,
        document_version: 3,
        output_events: 2,
        blob_outputs: [
          { index: 0, output: display(shownReference) },
          { index: 1, output: stream(printedReference) },
        ],
      },
    );
    await expect.poll(async () => (await handle.getCell('a')).executionCount).toBe(1);
    expect((await handle.getCell('a')).outputs).toEqual([display(shown), stream(printed)]);
    expect((await handle.listCells())[0]?.outputs).toEqual([display(shown), stream(printed)]);
    // The copy holds the references, not the texts: with the blobs gone, the read says so.
    rmSync(blobDir, { recursive: true });
    const lost = (await handle.getCell('a')).outputs.map((output) =>
      String(output.text ?? (output.data as Record<string, unknown>)['text/plain']),
    );
    expect(lost).toEqual([
      `[output data lost: its blob ${shownReference.$nteract_blob} is missing from ${blobDir}]`,
      `[output data lost: its blob ${printedReference.$nteract_blob} is missing from ${blobDir}]`,
    ]);
  });
});
