import { createContext, runInContext } from 'node:vm';
import type { CellOutput, CellType, NotebookCell } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';

/** Each source and each output's text is searched up to this many characters (the rest is not). */
export const maxSearchedChars = 1_000_000;

/** The time one search may take over everything it searches; a pattern that takes longer is stopped. */
export const searchTimeLimitMs = 3000;

/** Matching lines counted at most; past this many, the total is a lower bound. */
export const maxCountedMatches = 10_000;

/** A line (or context line) shown is at most this many characters, cut around the match. */
export const maxShownLineChars = 240;

/** The longest query accepted. */
export const maxQueryChars = 1000;

/** What to look for, and where. */
export interface SearchQuery {
  readonly query: string;
  readonly regex: boolean;
  readonly caseSensitive: boolean;
  readonly scope: 'source' | 'outputs' | 'both';
  /** Lines shown before and after each matching line. */
  readonly contextLines: number;
}

/** One notebook to search: its cells as read now. */
export interface SearchedNotebook {
  readonly notebookId: string;
  readonly path: string | undefined;
  readonly cells: readonly NotebookCell[];
}

/** One matching line (a line with several matches is one, at its first). */
export interface SearchMatch {
  readonly notebook_id: string;
  readonly path: string | null;
  readonly cell_id: string;
  readonly cell_index: number;
  readonly cell_type: CellType;
  readonly in: 'source' | 'output';
  /** Which output of the cell (outputs only). */
  readonly output_index?: number;
  /** 1-based, within the source or the output's text. */
  readonly line: number;
  /** 1-based column of the first match on the line. */
  readonly column: number;
  readonly text: string;
  readonly before?: readonly string[];
  readonly after?: readonly string[];
}

/** Every matching line in order (notebooks as given, cells in order, a cell's source before its outputs). */
export interface SearchOutcome {
  readonly matches: readonly SearchMatch[];
  /** More lines matched than {@link maxCountedMatches}: `matches` holds the first ones. */
  readonly capped: boolean;
  /** Texts longer than {@link maxSearchedChars}, of which only the beginning was searched. */
  readonly cutTexts: number;
}

/** How the search is bounded, in words an answer carries. */
export const searchBounds = `each cell source and each output's text is searched up to its first ${maxSearchedChars.toLocaleString('en-US')} characters; the whole search gets ${searchTimeLimitMs / 1000} s (a pattern still running then is stopped: an error); at most ${maxCountedMatches.toLocaleString('en-US')} matching lines are counted`;

/**
 * The query as a global, multiline regular expression (`^`/`$` match at line ends): escaped when
 * literal, case-insensitive unless `caseSensitive`; an invalid pattern is a tool error saying why.
 */
export function compileSearchPattern(query: string, regex: boolean, caseSensitive: boolean): RegExp {
  if (query === '') throw new ToolError('query must not be empty.');
  if (query.length > maxQueryChars) {
    throw new ToolError(`query is ${query.length} characters long; at most ${maxQueryChars}.`);
  }
  const flags = caseSensitive ? 'gm' : 'gim';
  if (!regex) return new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), flags);
  try {
    return new RegExp(query, flags);
  } catch (error) {
    throw new ToolError(
      `Invalid regular expression ${JSON.stringify(query)}: ${(error as Error).message}. Fix it, or search the literal text with regex=false.`,
    );
  }
}

/** One searchable text: a cell's source or one output's text. */
interface SearchedText {
  readonly notebook: SearchedNotebook;
  readonly cell: NotebookCell;
  readonly cellIndex: number;
  readonly outputIndex: number | undefined;
  readonly text: string;
}

/**
 * Searches the notebooks' cells for `query` (see {@link searchBounds} for how it is bounded: a
 * pattern that backtracks without end is stopped by a timer around the matching, which V8
 * honours inside a regular expression too). Pure but for that timer.
 */
export function searchNotebooks(
  notebooks: readonly SearchedNotebook[],
  query: SearchQuery,
  timeLimitMs = searchTimeLimitMs,
): SearchOutcome {
  const pattern = compileSearchPattern(query.query, query.regex, query.caseSensitive);
  const texts: SearchedText[] = [];
  let cutTexts = 0;
  const add = (
    notebook: SearchedNotebook,
    cell: NotebookCell,
    cellIndex: number,
    outputIndex: number | undefined,
    text: string,
  ) => {
    if (text === '') return;
    if (text.length > maxSearchedChars) cutTexts += 1;
    // A text's last newline ends its last line; it starts no empty one.
    const searched = text.slice(0, maxSearchedChars).replace(/\r?\n$/, '');
    texts.push({ notebook, cell, cellIndex, outputIndex, text: searched });
  };
  for (const notebook of notebooks) {
    notebook.cells.forEach((cell, cellIndex) => {
      if (query.scope !== 'outputs') add(notebook, cell, cellIndex, undefined, cell.source);
      if (query.scope !== 'source') {
        cell.outputs.forEach((output, outputIndex) => {
          add(notebook, cell, cellIndex, outputIndex, outputText(output));
        });
      }
    });
  }
  // Hits as [text, offset, …]: the matching itself runs under the timer, nothing else does.
  const hits: number[] = [];
  let capped = false;
  const match = () => {
    for (let index = 0; index < texts.length && !capped; index += 1) {
      const text = (texts[index] as SearchedText).text;
      pattern.lastIndex = 0;
      for (let found = pattern.exec(text); found !== null; found = pattern.exec(text)) {
        hits.push(index, found.index);
        if (hits.length / 2 >= maxCountedMatches) {
          capped = true;
          break;
        }
        // One hit per line: go on from the next line.
        const lineEnd = text.indexOf('\n', found.index);
        if (lineEnd < 0) break;
        pattern.lastIndex = lineEnd + 1;
      }
    }
  };
  try {
    runInContext('match()', createContext({ match }), { timeout: timeLimitMs });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    throw new ToolError(
      `The search was stopped after ${timeLimitMs / 1000} s: the pattern ${JSON.stringify(query.query)} takes too long on this text (nested repetition such as (a+)+ can take exponential time). Simplify it, or search literal text with regex=false.`,
    );
  }
  const matches: SearchMatch[] = [];
  let lines: { readonly index: number; readonly starts: number[] } | undefined;
  for (let at = 0; at < hits.length; at += 2) {
    const index = hits[at] as number;
    const offset = hits[at + 1] as number;
    const searched = texts[index] as SearchedText;
    if (lines?.index !== index) lines = { index, starts: lineStarts(searched.text) };
    matches.push(matchAt(searched, lines.starts, offset, query.contextLines));
  }
  return { matches, capped, cutTexts };
}

/** ANSI colour and cursor sequences, which tracebacks carry. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what it matches
const ansiEscapes = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** The text of an output that is searched: a stream's text, an error's name, value and traceback, a result's plain text (else its Markdown). */
export function outputText(output: CellOutput): string {
  switch (output.output_type) {
    case 'stream':
      return joinedText(output.text);
    case 'error': {
      const traceback = Array.isArray(output.traceback) ? output.traceback.map(String) : [];
      return [`${String(output.ename ?? '')}: ${String(output.evalue ?? '')}`, ...traceback]
        .join('\n')
        .replace(ansiEscapes, '');
    }
    case 'execute_result':
    case 'display_data': {
      const data = (output.data ?? {}) as Record<string, unknown>;
      return joinedText(data['text/plain'] ?? data['text/markdown']);
    }
    default:
      return '';
  }
}

function matchAt(searched: SearchedText, starts: readonly number[], offset: number, contextLines: number): SearchMatch {
  const { text, notebook, cell } = searched;
  const line = lineOf(starts, offset);
  const lineText = (number: number): string => {
    const begin = starts[number] as number;
    const end = number + 1 < starts.length ? (starts[number + 1] as number) - 1 : text.length;
    return text.slice(begin, end).replace(/\r$/, '');
  };
  const column = offset - (starts[line] as number);
  const context = (from: number, to: number) => {
    const shown: string[] = [];
    for (let number = Math.max(0, from); number < Math.min(starts.length, to); number += 1) {
      shown.push(shownLine(lineText(number), 0));
    }
    return shown;
  };
  return {
    notebook_id: notebook.notebookId,
    path: notebook.path ?? null,
    cell_id: cell.id,
    cell_index: searched.cellIndex,
    cell_type: cell.cellType,
    in: searched.outputIndex === undefined ? 'source' : 'output',
    ...(searched.outputIndex === undefined ? {} : { output_index: searched.outputIndex }),
    line: line + 1,
    column: column + 1,
    text: shownLine(lineText(line), column),
    ...(contextLines > 0
      ? { before: context(line - contextLines, line), after: context(line + 1, line + 1 + contextLines) }
      : {}),
  };
}

/** A line as shown: whole when short, else {@link maxShownLineChars} characters around `column`, cuts marked. */
function shownLine(line: string, column: number): string {
  if (line.length <= maxShownLineChars) return line;
  const begin = Math.max(0, Math.min(column - 60, line.length - maxShownLineChars));
  const end = begin + maxShownLineChars;
  return `${begin > 0 ? '…' : ''}${line.slice(begin, end)}${end < line.length ? '…' : ''}`;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

/** The 0-based line holding `offset` (binary search over the line starts). */
function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] as number) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

function joinedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join('');
  return '';
}
