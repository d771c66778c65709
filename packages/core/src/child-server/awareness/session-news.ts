import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';

/** How a line of news starts in a tool result, so an agent (and a test) tells it from the tool's own text. */
export const sessionNewsPrefix = '[nteract] ';

/**
 * What the agent has not been told yet about a notebook: a condition that began or changed since
 * it was last told (autosave failing, the file gone, …), and the owner's one-off notices (the file
 * was reloaded, saving works again). Each is said once, with the next tool answer; a condition
 * that lasts stays in `session_status`. Remembers per handle what it told, so a condition still
 * true on a new connection (after a rejoin) is said once more there.
 */
export class SessionNews {
  readonly #told = new WeakMap<NotebookHandle, ReadonlyMap<string, string>>();

  /** The lines of news for `handle` (none when it is `undefined`), and from now on they count as told. */
  public take(handle: NotebookHandle | undefined): string[] {
    if (!handle) return [];
    const told = this.#told.get(handle);
    const now = new Map((handle.conditions ?? []).map((condition) => [condition.kind, condition.message]));
    const lines = [...now].filter(([kind, message]) => told?.get(kind) !== message).map(([, message]) => message);
    this.#told.set(handle, now);
    lines.push(...(handle.takeNotices?.() ?? []));
    return lines;
  }
}

/** `result` with each line of news as a text item of its own after the tool's content. */
export function withSessionNews(result: CallToolResult, lines: readonly string[]): CallToolResult {
  if (lines.length === 0) return result;
  return {
    ...result,
    content: [
      ...result.content,
      ...lines.map((line) => ({ type: 'text' as const, text: `${sessionNewsPrefix}${line}` })),
    ],
  };
}
