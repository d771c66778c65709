import { isUtf8 } from 'node:buffer';
import { sessionReportMetaKey } from '@nteract-mcp/core';

/** Where a value sits in a line: bytes `start` (inclusive) to `end` (exclusive). */
export interface ByteSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * A child's line read as a successful JSON-RPC answer without building it: its numeric `id`
 * (and where that value sits, to rewrite it), where its JSON text ends, and the few parts of its
 * `result` the proxy reads on the way (the session report in `result._meta`, `result.isError`).
 */
export interface ScannedAnswer {
  readonly line: Buffer;
  readonly id: number;
  readonly idSpan: ByteSpan;
  /** Just after the closing `}` of the message (trailing whitespace, e.g. a `\r`, excluded). */
  readonly end: number;
  /** The session report in `result._meta` (core's `sessionReportMetaKey`) as parsed, when present. */
  readonly sessionReport: unknown;
  /** `result.isError` is `true`. */
  readonly isError: boolean;
}

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;

/**
 * The last session report read, by its bytes: a child repeats the same report on every answer
 * until its session changes, so the same bytes are not parsed again. The value is shared: never
 * mutate it.
 */
export interface SessionReportCache {
  /** The report's bytes, one character per byte (`latin1`): equal strings are equal bytes. */
  bytes?: string;
  value?: unknown;
}

const sdkHead = '{"result":{';
const sdkTail = '},"jsonrpc":"2.0","id":';
const sdkSessionHead = `"_meta":{${JSON.stringify(sessionReportMetaKey)}:`;
const sdkIsErrorTrue = ',"isError":true';
const sessionName = Buffer.from(JSON.stringify(sessionReportMetaKey));

/**
 * Reads `line` (one transport line without its `\n`) as a successful JSON-RPC 2.0 answer laid
 * out as the MCP SDK writes it: `{"result":{…},"jsonrpc":"2.0","id":7}`, with `_meta` first in
 * `result` and `isError` last (the order of the SDK's schemas) and names written plainly. It is
 * read from its ends: what lies between is passed on unread, as a byte pipe would, but for the
 * session report first in `_meta` (the report's key anywhere else sends the line the long
 * way). The line must be valid UTF-8.
 *
 * Returns `undefined` for any other line (a request, a notification, an error answer, another
 * layout, a string id): the caller then parses it in full. `cache` spares parsing a session report
 * the child repeats. Pure but for `cache`.
 */
export function scanChildAnswer(line: Buffer, cache?: SessionReportCache): ScannedAnswer | undefined {
  let end = line.length;
  while (end > 0 && (line[end - 1] === 0x20 || line[end - 1] === 0x09 || line[end - 1] === 0x0d)) end -= 1;
  if (line[end - 1] !== closeBrace || !startsWith(line, 0, sdkHead)) return undefined;
  let digits = end - 1;
  while (digits > 0 && isDigit(line[digits - 1])) digits -= 1;
  const idLength = end - 1 - digits;
  if (idLength === 0 || idLength > 15 || (line[digits] === 0x30 && idLength > 1)) return undefined;
  const tail = digits - sdkTail.length;
  if (tail < sdkHead.length - 1 || !startsWith(line, tail, sdkTail)) return undefined;
  let sessionReport: unknown;
  if (startsWith(line, sdkHead.length, sdkSessionHead)) {
    const start = sdkHead.length + sdkSessionHead.length;
    const cached = cache?.bytes;
    // The report seen last, byte for byte: a whole JSON value ends where its bytes end.
    const repeated = cached !== undefined && start + cached.length <= tail && startsWith(line, start, cached);
    const valueEnd = repeated ? start + cached.length : skipObjectOrString(line, start, tail);
    if (valueEnd < 0) return undefined;
    if (repeated) sessionReport = cache?.value;
    else {
      try {
        sessionReport = JSON.parse(line.toString('utf8', start, valueEnd));
      } catch {
        return undefined;
      }
      if (cache) {
        cache.bytes = line.toString('latin1', start, valueEnd);
        cache.value = sessionReport;
      }
    }
    // More members in that `_meta`: one of them may name the report again (JSON.parse keeps the last).
    if (line[valueEnd] !== closeBrace && line.indexOf(sessionName, valueEnd) !== -1) return undefined;
  } else if (line.indexOf(sessionName) !== -1) return undefined;
  if (!isUtf8(line)) return undefined;
  const isError = tail >= sdkIsErrorTrue.length && startsWith(line, tail - sdkIsErrorTrue.length, sdkIsErrorTrue);
  const id = Number(line.toString('latin1', digits, end - 1));
  return { line, id, idSpan: { start: digits, end: end - 1 }, end, sessionReport, isError };
}

/**
 * Past the object or string starting at `from` (strings skipped, brackets counted), before
 * `limit`; -1 when it does not end there or is something else. The value is parsed next, which
 * checks it.
 */
function skipObjectOrString(line: Buffer, from: number, limit: number): number {
  if (line[from] === quote) return skipString(line, from + 1, limit);
  if (line[from] !== openBrace) return -1;
  let depth = 0;
  let i = from;
  while (i < limit) {
    const c = line[i];
    if (c === quote) {
      i = skipString(line, i + 1, limit);
      if (i < 0) return -1;
      continue;
    }
    if (c === openBrace || c === openBracket) depth += 1;
    else if (c === closeBrace || c === closeBracket) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
    i += 1;
  }
  return -1;
}

/** Past the closing quote of a string whose content starts at `from`; -1 when it is not a valid JSON string. */
function skipString(line: Buffer, from: number, n: number): number {
  let i = from;
  while (i < n) {
    const c = line[i] as number;
    if (c === quote) return i + 1;
    if (c === backslash) {
      const e = line[i + 1];
      if (e === 0x75) {
        // \uXXXX
        for (let k = i + 2; k < i + 6; k++) if (k >= n || !isHex(line[k] as number)) return -1;
        i += 6;
        continue;
      }
      if (
        e !== quote &&
        e !== backslash &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      )
        return -1;
      i += 2;
      continue;
    }
    if (c < 0x20) return -1;
    i += 1;
  }
  return -1;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * `line` holds `bytes` (one character per byte) at `at`. Read as `latin1` and compared as a string:
 * one native call, cheaper than a loop in script or `Buffer.compare` (which checks its offsets in
 * script first) while the relay's code is not yet optimized, as it is for most of a session.
 */
function startsWith(line: Buffer, at: number, bytes: string): boolean {
  return at >= 0 && at + bytes.length <= line.length && line.toString('latin1', at, at + bytes.length) === bytes;
}
