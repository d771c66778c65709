import * as z from 'zod';
import { idempotencyHonoredMeta } from '../../handoff/handoff-contract.js';
import type { CommentThread, NotebookComments } from '../../ports/notebook-handle.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { defineChildTool, jsonResult, type RegisteredChildTool } from './child-tool-registry.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';
import { escapedBytes } from './tool-result-budget.js';

/** Threads one `list_comments` answer shows unless `count` says otherwise, and the most it may ask. */
export const defaultCommentCount = 20;
const maxCommentCount = 100;
/** The bytes the threads of one answer take at most (the rest is paged with `start`). */
export const commentAnswerBytes = 48 * 1024;

/** The most characters of one message (the daemon's bound too). */
export const maxCommentLength = 4000;

/** The text of a message, refused (nothing sent) when it is blank or too long. */
function commentText(text: string): string {
  if (text.trim().length === 0) throw new ToolError('text must not be blank.');
  if (text.length > maxCommentLength) {
    throw new ToolError(
      `text must be at most ${maxCommentLength} characters (this one has ${text.length}); nothing was changed.`,
    );
  }
  return text;
}

/** What the tools say when the notebook's backend keeps no comments. */
export const noCommentsMessage =
  'This notebook keeps no comments: comments are kept by the local daemon (runtimed), and this notebook is opened through a backend without them (a hosted notebook). Nothing was changed.';

const textParameter = toolParameters.requiredString(
  `The message (at most ${maxCommentLength} characters). Its author is this session (your client), never a parameter.`,
);
const threadParameter = toolParameters.requiredString('The thread id (from add_comment or list_comments).');

/**
 * The comment tools: threads of messages on a cell of the active notebook (optionally on a range of
 * its source), with replies, resolve and reopen, kept by the notebook's owner beside the notebook
 * (never in its cells or metadata). Each message's author is the peer this session is (the daemon
 * takes it from the connection). What another peer (a person on the live page, another agent) does
 * to a thread is told once with this agent's next answer on the notebook. A backend without
 * comments (a hosted notebook) says so and changes nothing.
 */
export function createCommentTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  /** The active notebook's comments, or the tool's refusal when its backend keeps none. */
  const comments = (): { comments: NotebookComments; ensureCurrent: () => void } => {
    const access = deps.slot.access('document');
    const { comments: kept } = access.handle;
    if (kept === undefined) throw new ToolError(noCommentsMessage);
    return { comments: kept, ensureCurrent: () => access.ensureCurrent() };
  };

  const addComment = defineChildTool({
    name: 'add_comment',
    session: 'document',
    description:
      'Start a comment thread on a cell of the active notebook, optionally on a range of its source (range: {start, end}, character offsets, end exclusive; the text there is kept as the quote, so a later edit shows whether the range moved or vanished). The people on the live page see it on the cell and can reply, resolve and reopen. Comments are kept beside the notebook, never in the .ipynb. The author is you (this session).',
    inputSchema: z.object({
      cell_id: toolParameters.requiredString('The cell to comment on.'),
      text: textParameter,
      range: z
        .object({ start: z.int().nonnegative(), end: z.int().nonnegative() })
        .nullish()
        .describe('A range of the cell source: {start, end} character offsets (end exclusive).'),
    }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const range = given(args.range);
      if (range && range.end <= range.start) throw new ToolError('range.end must be after range.start.');
      const text = commentText(args.text);
      const { comments: kept, ensureCurrent } = comments();
      const thread = await kept.add(args.cell_id, text, range, { idempotencyKey: context.idempotencyKey });
      ensureCurrent();
      return jsonResult({ thread: threadJson(thread) });
    },
  });

  const replyComment = defineChildTool({
    name: 'reply_comment',
    session: 'document',
    description:
      'Reply to a comment thread of the active notebook (a resolved thread stays resolved: reopen_comment reopens it). The author is you (this session).',
    inputSchema: z.object({ thread_id: threadParameter, text: textParameter }),
    meta: idempotencyHonoredMeta,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, context) => {
      const text = commentText(args.text);
      const { comments: kept, ensureCurrent } = comments();
      const thread = await kept.reply(args.thread_id, text, { idempotencyKey: context.idempotencyKey });
      ensureCurrent();
      return jsonResult({ thread: threadJson(thread) });
    },
  });

  const resolveComment = defineChildTool({
    name: 'resolve_comment',
    session: 'document',
    description:
      'Resolve a comment thread of the active notebook (it is kept; list_comments shows it with include_resolved).',
    inputSchema: z.object({ thread_id: threadParameter }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const { comments: kept, ensureCurrent } = comments();
      const thread = await kept.resolve(args.thread_id);
      ensureCurrent();
      return jsonResult({ thread: threadJson(thread) });
    },
  });

  const reopenComment = defineChildTool({
    name: 'reopen_comment',
    session: 'document',
    description: 'Reopen a resolved comment thread of the active notebook.',
    inputSchema: z.object({ thread_id: threadParameter }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const { comments: kept, ensureCurrent } = comments();
      const thread = await kept.reopen(args.thread_id);
      ensureCurrent();
      return jsonResult({ thread: threadJson(thread) });
    },
  });

  const listComments = defineChildTool({
    name: 'list_comments',
    session: 'document',
    description: `The comment threads of the active notebook (of one cell with cell_id), oldest first, each with its cell, range, resolved state and messages (author, text, time); open ones only unless include_resolved. A thread whose cell was deleted is kept and marked orphaned. ${defaultCommentCount} threads per answer by default (count, at most ${maxCommentCount}; about ${commentAnswerBytes / 1024} KiB at most), paged with start.`,
    inputSchema: z.object({
      cell_id: toolParameters.optionalString('Only the threads of this cell.'),
      include_resolved: toolParameters.optionalBoolean('Show resolved threads too (default false).'),
      start: toolParameters.optionalIndex('Index of the first thread (default 0).'),
      count: toolParameters.optionalIndex(
        `How many threads (default ${defaultCommentCount}, at most ${maxCommentCount}).`,
      ),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const start = given(args.start) ?? 0;
      const count = given(args.count) ?? defaultCommentCount;
      if (count < 1 || count > maxCommentCount) throw new ToolError(`count must be between 1 and ${maxCommentCount}.`);
      const { comments: kept, ensureCurrent } = comments();
      const cellId = given(args.cell_id);
      const listed = await kept.list({
        ...(cellId === undefined ? {} : { cellId }),
        includeResolved: given(args.include_resolved) ?? false,
      });
      ensureCurrent();
      const matching = listed.threads.length;
      const page = listed.threads.slice(start, start + count).map(threadJson);
      let used = 0;
      let shown = 0;
      for (const thread of page) {
        used += escapedBytes(JSON.stringify(thread, null, 2));
        if (shown > 0 && used > commentAnswerBytes) break;
        shown += 1;
      }
      const next = start + shown;
      return jsonResult({
        threads: page.slice(0, shown),
        matching,
        notebook_threads: listed.total,
        notebook_resolved: listed.resolved,
        start,
        ...(next < matching
          ? {
              truncated: {
                next_start: next,
                note: `${matching - next} more thread(s): call list_comments again with start=${next}.`,
              },
            }
          : {}),
        ...(start > 0 && start >= matching ? { note: `start ${start} is past the last thread (${matching}).` } : {}),
      });
    },
  });

  return [addComment, replyComment, resolveComment, reopenComment, listComments];
}

/** A thread as the tools answer it (snake_case, like the rest of the answers). */
function threadJson(thread: CommentThread): Record<string, unknown> {
  const { range } = thread;
  return {
    thread_id: thread.id,
    cell_id: thread.cellId,
    ...(range
      ? {
          range: {
            start: range.start,
            end: range.end,
            quote: range.quote,
            state: range.state,
            ...(range.nowStart === undefined ? {} : { now_start: range.nowStart, now_end: range.nowEnd }),
          },
        }
      : {}),
    resolved: thread.resolved,
    ...(thread.resolvedBy === undefined ? {} : { resolved_by: thread.resolvedBy, resolved_at: thread.resolvedAt }),
    ...(thread.orphaned ? { orphaned: true, orphaned_note: 'Its cell is no longer in the notebook.' } : {}),
    messages: thread.messages.map((message) => ({ author: message.author, text: message.text, at: message.at })),
  };
}
