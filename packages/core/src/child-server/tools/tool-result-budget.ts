import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeMiB } from '../../handoff/mcp-message-limits.js';

/** Strings shorter than this are never cut (ids, names, markers). */
const minimumCutChars = 256;

/** Bytes `text` takes inside a JSON document (quoted and escaped, UTF-8). Pure. */
export function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}

/** Bytes of a tool result as it is serialized into its JSON-RPC answer. Pure. */
export function resultBytes(result: CallToolResult): number {
  return Buffer.byteLength(JSON.stringify(result));
}

/** The marker that ends a string cut to fit a result. */
export function cutMarker(moreChars: number, budgetBytes: number): string {
  return `\n… [${moreChars} more characters not shown: one tool result is limited to ${describeMiB(budgetBytes)}]`;
}

/**
 * `result` when its serialized size is within `budgetBytes`; else a copy that fits, cut where it
 * is largest: in a text item that holds JSON (a `jsonResult`) the longest strings are shortened
 * and end with a {@link cutMarker}, so the text stays valid JSON; a plain text item is shortened
 * at its end the same way. Items other than text are kept. When nothing can be cut enough, a tool
 * error that names the size and the budget. Never returns a result over the budget. Pure.
 */
export function fitToolResult(result: CallToolResult, budgetBytes: number): CallToolResult {
  let current = result;
  let size = resultBytes(current);
  for (let round = 0; size > budgetBytes && round < 64; round += 1) {
    const next = cutLargestText(current, size - budgetBytes, budgetBytes);
    if (next === undefined) break;
    current = next;
    size = resultBytes(current);
  }
  if (size <= budgetBytes) return current;
  return {
    content: [
      {
        type: 'text',
        text: `The result is ${resultBytes(result)} bytes, over the ${describeMiB(budgetBytes)} limit of one tool result, and could not be cut to fit. Ask for less at once (a window of cells with start/count, one cell with get_cell, outputs in pages (get_cell or get_results with offset and length)).`,
      },
    ],
    isError: true,
  };
}

/** One step: cuts the largest text item (inside its JSON when it holds JSON) by about `excess` bytes. */
function cutLargestText(result: CallToolResult, excess: number, budgetBytes: number): CallToolResult | undefined {
  let largest = -1;
  result.content.forEach((item, index) => {
    if (item.type !== 'text') return;
    const best = largest === -1 ? undefined : result.content[largest];
    if (best === undefined || (best.type === 'text' && item.text.length > best.text.length)) largest = index;
  });
  const item = largest === -1 ? undefined : result.content[largest];
  if (item?.type !== 'text' || item.text.length < minimumCutChars) return undefined;
  const text = cutJsonText(item.text, excess, budgetBytes) ?? cutString(item.text, excess * 1.02, budgetBytes);
  if (text === undefined) return undefined;
  const content = [...result.content];
  content[largest] = { ...item, text };
  return { ...result, content };
}

/** A JSON text with its longest string shortened by about `excess` bytes of the final message. */
function cutJsonText(text: string, excess: number, budgetBytes: number): string | undefined {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const longest = longestString(value, []);
  if (longest === undefined || longest.text.length < minimumCutChars) return undefined;
  // Inside the pretty JSON inside the JSON-RPC line, each byte of the string costs its escapes twice.
  const ratio = escapedBytes(JSON.stringify(longest.text)) / Math.max(1, longest.text.length);
  const cut = cutString(longest.text, excess * 1.02, budgetBytes, ratio);
  if (cut === undefined) return undefined;
  return JSON.stringify(replaceAt(value, longest.path, cut), null, 2);
}

/**
 * `text` shortened so that about `excessBytes` fewer bytes remain (given `bytesPerChar` in the
 * final message), ending with a marker; `undefined` when too short to cut.
 */
function cutString(text: string, excessBytes: number, budgetBytes: number, bytesPerChar?: number): string | undefined {
  if (text.length < minimumCutChars) return undefined;
  const ratio = bytesPerChar ?? escapedBytes(text) / Math.max(1, text.length);
  const dropChars = Math.ceil(excessBytes / ratio) + 160;
  let keep = Math.max(0, text.length - dropChars);
  const code = text.charCodeAt(keep - 1);
  if (keep > 0 && code >= 0xd800 && code <= 0xdbff) keep -= 1;
  return `${text.slice(0, keep)}${cutMarker(text.length - keep, budgetBytes)}`;
}

type Path = readonly (string | number)[];

function longestString(value: unknown, path: Path): { path: Path; text: string } | undefined {
  if (typeof value === 'string') return { path, text: value };
  let best: { path: Path; text: string } | undefined;
  const consider = (child: unknown, key: string | number): void => {
    const found = longestString(child, [...path, key]);
    if (found && (best === undefined || found.text.length > best.text.length)) best = found;
  };
  if (Array.isArray(value)) value.forEach(consider);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) consider(child, key);
  }
  return best;
}

function replaceAt(value: unknown, path: Path, replacement: string): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = replaceAt(copy[head as number], rest, replacement);
    return copy;
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head as string]: replaceAt(record[head as string], rest, replacement) };
}
