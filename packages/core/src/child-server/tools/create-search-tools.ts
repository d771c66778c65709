import * as z from 'zod';
import type { NotebookSession } from '../../session/notebook-session.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import {
  maxCountedMatches,
  type SearchedNotebook,
  searchBounds,
  searchNotebooks,
} from '../inspection/search-notebooks.js';
import { defineChildTool, jsonResult, type RegisteredChildTool } from './child-tool-registry.js';
import { ToolError } from './to-tool-failure.js';
import { given, toolParameters } from './tool-parameters.js';
import { escapedBytes } from './tool-result-budget.js';

/** Matching lines one answer lists unless `count` says otherwise, and the most it may ask. */
export const defaultSearchCount = 50;
const maxSearchCount = 500;

/** The bytes the matches of one answer take at most (the rest is paged with `start`). */
export const searchAnswerBytes = 48 * 1024;

/** Context lines around a match unless `context_lines` says otherwise, and the most. */
const defaultContextLines = 1;
const maxContextLines = 10;

/**
 * `search_notebook`: text or a regular expression over the sources and the text outputs of the
 * active notebook, or of every open one (the active and the parked), with the notebook, cell id,
 * cell index and line of each matching line and a few lines of context; paged and bounded
 * (see `searchBounds`). A read: it marks no cell as seen (it shows lines, not cells).
 */
export function createSearchTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const searchNotebook = defineChildTool({
    name: 'search_notebook',
    session: 'document',
    description: `Search the active notebook, or every open notebook (notebook='all': the active and the parked ones), for text (case-insensitive by default) or a JavaScript regular expression (regex=true; ^ and $ match at line ends) in cell sources and/or text outputs (in: 'source', 'outputs' or 'both', the default). One result per matching line: notebook id and path, cell id, cell index, source or output (output_index), line and column (1-based), the line and context_lines lines around it (default ${defaultContextLines}). ${defaultSearchCount} results per answer by default (count, at most ${maxSearchCount}; about ${searchAnswerBytes / 1024} KiB at most), paged with start; 'truncated' names the next start. Bounded: ${searchBounds}.`,
    inputSchema: z.object({
      query: toolParameters.requiredString('The text, or the regular expression with regex=true.'),
      regex: toolParameters.optionalBoolean('Treat query as a regular expression (default false).'),
      case_sensitive: toolParameters.optionalBoolean('Match case (default false).'),
      in: z
        .enum(['source', 'outputs', 'both'])
        .nullish()
        .describe("Where to search: 'source', 'outputs' or 'both' (default)."),
      notebook: z
        .enum(['active', 'all'])
        .nullish()
        .describe("'active' (default) or 'all': every open notebook, the parked ones too."),
      context_lines: toolParameters.optionalIndex(
        `Lines shown before and after each match (default ${defaultContextLines}, at most ${maxContextLines}).`,
      ),
      start: toolParameters.optionalIndex('Index of the first result (default 0).'),
      count: toolParameters.optionalIndex(
        `How many results (default ${defaultSearchCount}, at most ${maxSearchCount}).`,
      ),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const contextLines = given(args.context_lines) ?? defaultContextLines;
      if (contextLines > maxContextLines) throw new ToolError(`context_lines must be at most ${maxContextLines}.`);
      const start = given(args.start) ?? 0;
      const count = given(args.count) ?? defaultSearchCount;
      if (count < 1 || count > maxSearchCount) throw new ToolError(`count must be between 1 and ${maxSearchCount}.`);
      const which = given(args.notebook) ?? 'active';
      const sessions = sessionsToSearch(deps, which);
      const notebooks: SearchedNotebook[] = [];
      const skipped: { notebook_id: string; reason: string }[] = [];
      for (const session of sessions) {
        const { handle } = session;
        if (handle.isClosed) {
          skipped.push({
            notebook_id: handle.notebookId,
            reason: 'its connection is lost (it is rejoined when it can be)',
          });
          continue;
        }
        try {
          notebooks.push({ notebookId: handle.notebookId, path: handle.notebookPath, cells: await handle.listCells() });
        } catch (error) {
          // The active notebook's failure is the call's; a parked one is skipped, saying why.
          if (session === deps.slot.active && which === 'active') throw error;
          skipped.push({
            notebook_id: handle.notebookId,
            reason: `its cells could not be read: ${(error as Error).message}`,
          });
        }
      }
      const outcome = searchNotebooks(notebooks, {
        query: args.query,
        regex: given(args.regex) ?? false,
        caseSensitive: given(args.case_sensitive) ?? false,
        scope: given(args.in) ?? 'both',
        contextLines,
      });
      const total = outcome.matches.length;
      const page = outcome.matches.slice(start, start + count);
      let used = 0;
      let shown = 0;
      for (const match of page) {
        used += escapedBytes(JSON.stringify(match, null, 2));
        if (shown > 0 && used > searchAnswerBytes) break;
        shown += 1;
      }
      const next = start + shown;
      return jsonResult({
        query: args.query,
        notebooks_searched: notebooks.map((notebook) => ({
          notebook_id: notebook.notebookId,
          path: notebook.path ?? null,
          cells: notebook.cells.length,
        })),
        ...(skipped.length > 0 ? { notebooks_skipped: skipped } : {}),
        total_matches: total,
        ...(outcome.capped
          ? { total_note: `The search stopped counting at ${maxCountedMatches} matching lines: there are more.` }
          : {}),
        start,
        matches: page.slice(0, shown),
        ...(next < total
          ? {
              truncated: {
                next_start: next,
                note: `${total - next} more result(s): call search_notebook again with start=${next} (and the same query).`,
              },
            }
          : {}),
        ...(start > 0 && start >= total ? { note: `start ${start} is past the last result (${total} in all).` } : {}),
        ...(outcome.cutTexts > 0
          ? {
              cut_texts: `${outcome.cutTexts} source(s) or output(s) were longer than the searched part; only their beginning was searched.`,
            }
          : {}),
        bounds: searchBounds,
      });
    },
  });
  return [searchNotebook];
}

/** The active session (`active`), or it and the parked ones (`all`); the slot's error when there are none. */
function sessionsToSearch(deps: ChildServerDependencies, which: 'active' | 'all'): readonly NotebookSession[] {
  if (which === 'active') return [deps.slot.access('document').session];
  const active = deps.slot.active;
  const all = [...(active ? [active] : []), ...deps.slot.parked];
  if (all.length === 0) deps.slot.access('document');
  return all;
}
