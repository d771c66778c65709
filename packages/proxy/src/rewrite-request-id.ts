import type { JsonRpcId } from '@nteract-mcp/core';

/** How the requests of most clients begin (the bench's, Python's SDK): `jsonrpc` first, then `id`. */
const leadingHead = '{"jsonrpc":"2.0","id":';
const idName = Buffer.from('"id"');

/**
 * `line` (a client's request as it came, without its `\n`, already parsed as valid JSON with the
 * top-level id `from`) with that id's value replaced by the child id `to`, and a `\n`: the bytes
 * to write to the child, instead of serializing the parsed request again. `undefined` when the id
 * is not where it can be rewritten without reading the whole line; the caller then serializes.
 *
 * Two layouts are rewritten, both with the id written as `JSON.stringify` writes it:
 * - the id last: the line ends with `,"id":<from>}` (the MCP SDK's clients). In valid JSON the
 *   final `}` closes the top-level object, so the member before it is a top-level one (its
 *   quotes follow a `,`, so they cannot be inside a string), and the last of its name (the one
 *   `JSON.parse` keeps);
 * - the id second, after `"jsonrpc":"2.0"` (the line begins `{"jsonrpc":"2.0","id":<from>,`),
 *   when no other `"id"` follows anywhere in the line: another top-level `id` would be the one
 *   the child's parser keeps.
 * Trailing whitespace (a `\r` of a `\r\n` line) is dropped. Pure.
 */
export function rewriteRequestId(line: Buffer, from: JsonRpcId, to: number): Buffer | undefined {
  let end = line.length;
  while (end > 0 && (line[end - 1] === 0x20 || line[end - 1] === 0x09 || line[end - 1] === 0x0d)) end -= 1;
  const fromText = JSON.stringify(from);
  // The id last: `,"id":<from>}`.
  const tailStart = end - fromText.length - 1;
  const memberStart = tailStart - 6;
  if (memberStart > 0 && line[end - 1] === 0x7d && matches(line, memberStart, ',"id":', fromText)) {
    return spliced(line, tailStart, end - 1, end, to);
  }
  // The id second: `{"jsonrpc":"2.0","id":<from>,`, and no other `"id"` after it.
  const valueEnd = leadingHead.length + fromText.length;
  if (line[valueEnd] === 0x2c && matches(line, 0, leadingHead, fromText) && line.indexOf(idName, valueEnd) === -1) {
    return spliced(line, leadingHead.length, valueEnd, end, to);
  }
  return undefined;
}

/** `line` holds `head` then `value` at `at` (compared as `latin1`: one character per byte). */
function matches(line: Buffer, at: number, head: string, value: string): boolean {
  const stop = at + head.length + value.length;
  return stop <= line.length && line.toString('latin1', at, stop) === head + value;
}

/** `line` up to `end` with the bytes from `start` to `stop` replaced by the digits of `to`, and a `\n`. */
function spliced(line: Buffer, start: number, stop: number, end: number, to: number): Buffer {
  const toText = String(to);
  const size = start + toText.length + (end - stop) + 1;
  const out = Buffer.allocUnsafe(size);
  line.copy(out, 0, 0, start);
  out.write(toText, start, 'latin1');
  line.copy(out, start + toText.length, stop, end);
  out[size - 1] = 0x0a;
  return out;
}
