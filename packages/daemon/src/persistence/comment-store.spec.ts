import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommentRecord, CommentThreads } from '../room/comment-threads.js';
import { CommentStore, type CommentStoreInit, commentSidecarPath } from './comment-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const notebookId = '00000000-0000-4000-8000-000000000001';
const at = '2026-01-01T00:00:00.000Z';

function setup(journal = true): { init: CommentStoreInit; sidecar: string; journalFile: string; notebook: string } {
  const dir = mkdtempSync(join(tmpdir(), 'comment-store-'));
  dirs.push(dir);
  const notebook = join(dir, 'talk.ipynb');
  writeFileSync(notebook, '{"cells": []}\n');
  const journalDir = join(dir, 'journal');
  return {
    init: {
      notebookId,
      sidecar: () => ({ path: commentSidecarPath(notebook), mode: 0o600 }),
      journalDir: journal ? journalDir : undefined,
      fsync: false,
    },
    sidecar: commentSidecarPath(notebook),
    journalFile: CommentStore.journalOf(journalDir, notebookId),
    notebook,
  };
}

/** Applies and makes durable, as the room does. */
async function change(store: CommentStore, threads: CommentThreads, record: CommentRecord): Promise<void> {
  threads.apply(record);
  await store.append(record, threads);
}

const added: CommentRecord = {
  op: 'add',
  thread_id: 't-1',
  message_id: 'm-1',
  cell_id: 'c1',
  author: 'agent:a:1',
  text: 'why?',
  at,
};
const replied: CommentRecord = {
  op: 'reply',
  thread_id: 't-1',
  message_id: 'm-2',
  author: 'human:Ada',
  text: 'because',
  at,
};

describe('CommentStore', () => {
  it('replays a journal whose changes the sidecar never got (a killed daemon), and leaves the notebook alone', async () => {
    const { init, sidecar, journalFile, notebook } = setup();
    const { store, threads } = CommentStore.load(init, 0);
    await change(store, threads, added);
    await change(store, threads, replied);
    expect(existsSync(sidecar)).toBe(false);
    expect(existsSync(journalFile)).toBe(true);

    const again = CommentStore.load(init, 0).threads;
    expect(again.thread('t-1').messages.map((message) => message.text)).toEqual(['why?', 'because']);
    expect(readFileSync(notebook, 'utf8')).toBe('{"cells": []}\n');
  });

  it('writes the sidecar on flush and restarts the journal with only what came after it', async () => {
    const { init, sidecar, journalFile } = setup();
    const { store, threads } = CommentStore.load(init, 0);
    await change(store, threads, added);
    await store.flush(threads);
    expect(JSON.parse(readFileSync(sidecar, 'utf8'))).toMatchObject({ nteract_comments: 1, seq: 1 });
    expect(existsSync(journalFile)).toBe(false);
    await change(store, threads, replied);
    expect(readFileSync(journalFile, 'utf8').trim().split('\n')).toHaveLength(1);

    const again = CommentStore.load(init, 0).threads;
    expect(again.thread('t-1').messages).toHaveLength(2);
  });

  it('ignores a torn last journal line (a write cut short) and keeps what came before it', async () => {
    const { init, journalFile } = setup();
    const { store, threads } = CommentStore.load(init, 0);
    await change(store, threads, added);
    appendFileSync(journalFile, '{"seq": 2, "record": {"op": "rep');
    const again = CommentStore.load(init, 0).threads;
    expect(again.all()).toHaveLength(1);
    expect(again.thread('t-1').messages).toHaveLength(1);
  });

  it('without a journal writes the sidecar before the change is answered', async () => {
    const { init, sidecar } = setup(false);
    const { store, threads } = CommentStore.load(init, 0);
    await change(store, threads, added);
    expect(JSON.parse(readFileSync(sidecar, 'utf8')).threads).toHaveLength(1);
  });

  it('makes no sidecar for a notebook nobody commented on, and sets an unreadable one aside', async () => {
    const { init, sidecar } = setup();
    const { store, threads } = CommentStore.load(init, 0);
    await store.flush(threads);
    expect(existsSync(sidecar)).toBe(false);
    writeFileSync(sidecar, 'not json');
    const loaded = CommentStore.load(init, 42);
    expect(loaded.threads.all()).toEqual([]);
    expect(existsSync(`${sidecar}.corrupt-42`)).toBe(true);
  });

  it('keeps nothing on disk for an ephemeral notebook', async () => {
    const { init, journalFile } = setup();
    const ephemeral = { ...init, sidecar: () => undefined };
    const { store, threads } = CommentStore.load(ephemeral, 0);
    await change(store, threads, added);
    await store.flush(threads);
    expect(existsSync(journalFile)).toBe(false);
  });
});
