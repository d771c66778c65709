import { describe, expect, it } from 'vitest';
import { checkClientRequest } from './check-client-request.js';
import { checkWire } from './check-wire.js';
import { wireNotebookHandshakeSchema } from './runtimed-handshake.js';
import { maxCommentTextLength, wireCommentThreadEventSchema } from './wire-comment.js';
import { wireNotebookConnectedSchema } from './wire-greeting.js';
import { wireNotebookAnswerSchemas } from './wire-notebook-answer.js';
import { wireRoomEventSchema } from './wire-room-event.js';

describe('the comment contract', () => {
  it('checks the comment requests: a message of at most the bound, not blank; a range that ends after it starts', () => {
    const ok = checkClientRequest('notebook', {
      id: 1,
      type: 'add_comment',
      cell_id: 'c1',
      text: 'why?',
      range: { start: 0, end: 3 },
      author: 'someone else',
    });
    expect(ok.kind).toBe('ok');
    // The author is the peer's, never a request's field: one given is dropped.
    expect(ok.kind === 'ok' && 'author' in ok.request).toBe(false);
    const tooLong = checkClientRequest('notebook', {
      id: 2,
      type: 'reply_comment',
      thread_id: 't-1',
      text: 'x'.repeat(maxCommentTextLength + 1),
    });
    expect(tooLong).toMatchObject({ kind: 'invalid', field: 'text' });
    expect(tooLong.kind === 'invalid' && tooLong.message).toContain(`at most ${maxCommentTextLength} characters`);
    expect(
      checkClientRequest('notebook', { id: 3, type: 'reply_comment', thread_id: 't-1', text: '  ' }),
    ).toMatchObject({
      kind: 'invalid',
      field: 'text',
    });
    expect(
      checkClientRequest('notebook', {
        id: 4,
        type: 'add_comment',
        cell_id: 'c1',
        text: 'x',
        range: { start: 3, end: 3 },
      }),
    ).toMatchObject({ kind: 'invalid' });
    expect(checkClientRequest('notebook', { id: 5, type: 'list_comments' }).kind).toBe('ok');
  });

  it('reads the answers, the broadcast, and the handshake and greeting fields that gate them', () => {
    const thread = {
      id: 't-1',
      cell_id: 'c1',
      resolved: false,
      orphaned: true,
      messages: [{ id: 'm', author: 'human:Ada', text: 'hi', at: '2026-01-01T00:00:00.000Z' }],
    };
    expect(checkWire(wireNotebookAnswerSchemas.add_comment, { thread }).ok).toBe(true);
    expect(checkWire(wireNotebookAnswerSchemas.list_comments, { threads: [thread], total: 1, resolved: 0 }).ok).toBe(
      true,
    );
    expect(checkWire(wireNotebookAnswerSchemas.add_comment, { thread: { ...thread, messages: [] } }).ok).toBe(false);
    const event = { event: 'comment_thread', action: 'replied', peer_id: 'p', peer_label: 'human:Ada', thread };
    expect(checkWire(wireCommentThreadEventSchema, event).ok).toBe(true);
    expect(checkWire(wireRoomEventSchema, event).ok).toBe(true);
    expect(checkWire(wireRoomEventSchema, { ...event, action: 'deleted' }).ok).toBe(false);
    const handshake = { channel: 'notebook', mode: 'attach', notebook_id: '00000000-0000-4000-8000-000000000001' };
    expect(checkWire(wireNotebookHandshakeSchema, { ...handshake, peer_label: 'x', comments: true }).ok).toBe(true);
    expect(checkWire(wireNotebookHandshakeSchema, { ...handshake, peer_label: 'x', comments: false }).ok).toBe(false);
    const connected = {
      type: 'connected',
      notebook_id: 'n',
      notebook_path: null,
      ephemeral: false,
      document_version: 0,
      cells: [],
      runtime: { state: 'ready', kernel_status: 'idle' },
      peer_id: 'p',
      daemon_pid: 1,
      daemon_started_at: 'now',
    };
    // A daemon before comments says nothing of them: the greeting still reads.
    const older = checkWire(wireNotebookConnectedSchema, connected);
    expect(older.ok && older.value.comments).toBeUndefined();
    const newer = checkWire(wireNotebookConnectedSchema, { ...connected, comments: true });
    expect(newer.ok && newer.value.comments).toBe(true);
  });
});
