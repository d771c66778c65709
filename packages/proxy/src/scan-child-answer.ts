import { isUtf8 } from 'node:buffer';

/** Where a value sits in a line: bytes `start` (inclusive) to `end` (exclusive). */
export interface ByteSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * A child's line read as a successful JSON-RPC answer without building it: its numeric `id`
 * (and where that value sits, to rewrite it), where its JSON text ends, and where the few parts of
 * its `result` the proxy reads on the way sit (`result._meta["nteract/session"]`, `result.isError`).
 */
export interface ScannedAnswer {
  readonly line: Buffer;
  readonly id: number;
  readonly idSpan: ByteSpan;
  /** Just after the closing `}` of the message (trailing whitespace, e.g. a `\r`, excluded). */
  readonly end: number;
  /** `result._meta["nteract/session"]` as parsed, when present. */
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
const colon = 0x3a;
const comma = 0x2c;
const minus = 0x2d;
const plus = 0x2b;
const dot = 0x2e;

/** Where an object sits, for the members the scan records: anywhere else, the top level, `result`, `result._meta`. */
const elsewhere = 0;
const topLevel = 1;
const inResult = 2;
const inResultMeta = 3;

const keyJsonrpc = ascii('jsonrpc');
const keyId = ascii('id');
const keyResult = ascii('result');
const keyError = ascii('error');
const keyMethod = ascii('method');
const keyMeta = ascii('_meta');
const keyIsError = ascii('isError');
const keySession = ascii('nteract/session');
const jsonrpcVersion = ascii('"2.0"');
const literalTrue = ascii('true');
const literalFalse = ascii('false');
const literalNull = ascii('null');

/**
 * Reads `line` (one transport line without its `\n`) as a successful JSON-RPC 2.0 answer: a JSON
 * object with `"jsonrpc": "2.0"`, a numeric `id`, a `result` that is an object, and no `method` or
 * `error`; `undefined` for anything else (the caller then parses the line in full).
 *
 * An answer laid out as the MCP SDK writes it (`{"result":{…},"jsonrpc":"2.0","id":7}`, `_meta`
 * first in `result` and `isError` last, as its schemas order them, names written plainly) is read
 * from its ends: what lies between is passed on unread, as a byte pipe would, but for the session
 * report (a `"nteract/session"` anywhere but first in `_meta` sends the line the long way). Any
 * other layout is checked to be strict JSON in full by {@link scanAnyAnswer}. Both check that the
 * line is valid UTF-8. `cache` spares parsing a session report the child repeats.
 */
export function scanChildAnswer(line: Buffer, cache?: SessionReportCache): ScannedAnswer | undefined {
  return scanSdkAnswer(line, cache) ?? scanAnyAnswer(line);
}

/**
 * The last session report read, by its bytes: a child repeats the same report on every answer
 * until its session changes, so the same bytes are not parsed again. The value is shared: never
 * mutate it.
 */
export interface SessionReportCache {
  bytes?: Buffer;
  value?: unknown;
}

const sdkHead = ascii('{"result":{');
const sdkTail = ascii('},"jsonrpc":"2.0","id":');
const sdkSessionHead = ascii('"_meta":{"nteract/session":');
const sdkIsErrorTrue = ascii(',"isError":true');
const sessionName = Buffer.from('"nteract/session"');

/**
 * The MCP SDK's layout, read from its ends (see {@link scanChildAnswer}): `{"result":{`, the
 * session report first in `_meta` (the SDK writes `_meta` first), `isError` last in `result`,
 * then `},"jsonrpc":"2.0","id":<integer>}`; `undefined` when the line is not laid out so.
 */
function scanSdkAnswer(line: Buffer, cache: SessionReportCache | undefined): ScannedAnswer | undefined {
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
      const bytes = line.subarray(start, valueEnd);
      try {
        sessionReport = JSON.parse(bytes.toString('utf8'));
      } catch {
        return undefined;
      }
      if (cache) {
        cache.bytes = Buffer.from(bytes);
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

/**
 * Any layout: the whole line is checked to be strict JSON (RFC 8259: literals, numbers, string
 * escapes, no control characters in strings, nothing after the value but whitespace) in valid
 * UTF-8, so what it accepts is what `JSON.parse` accepts; nothing is built but the spans.
 *
 * Returns `undefined` for anything but a plain successful answer (a request, a notification, an
 * error answer, a string id, a member named twice where it matters, an escaped member name where
 * it matters, malformed JSON). Pure; no recursion (nesting depth costs no stack).
 */
export function scanAnyAnswer(line: Buffer): ScannedAnswer | undefined {
  const n = line.length;
  const scan = new AnswerScan(line);
  // Per open container: whether it is an object, where it sits (see {@link topLevel}), where it
  // starts, and the member it is the value of.
  const objects: boolean[] = [];
  const places: number[] = [];
  const starts: number[] = [];
  const members: (Uint8Array | undefined)[] = [];
  let i = skipSpace(line, 0, n);
  if (line[i] !== openBrace) return undefined;
  // The place of the object whose member's value starts next, and that member.
  let place = elsewhere;
  let member: Uint8Array | undefined;
  let end = -1;
  while (end < 0) {
    // A value starts at `i` (after whitespace).
    i = skipSpace(line, i, n);
    if (i >= n) return undefined;
    const start = i;
    const c = line[i] as number;
    if (!scan.valueStarts(place, member, c)) return undefined;
    if (c === openBrace || c === openBracket) {
      const isObject = c === openBrace;
      objects.push(isObject);
      places.push(objects.length === 1 ? topLevel : childPlaceOf(place, member, isObject));
      starts.push(start);
      members.push(member);
      i = skipSpace(line, i + 1, n);
      if (line[i] !== (isObject ? closeBrace : closeBracket)) {
        if (isObject) {
          const read = readMember(line, i, n);
          if (read === undefined) return undefined;
          i = read.next;
          place = places[places.length - 1] as number;
          member = read.key;
        } else {
          place = elsewhere;
          member = undefined;
        }
        continue;
      }
      // An empty container: it closes below like any other.
    } else {
      if (c === quote) i = skipString(line, i + 1, n);
      else if (c === minus || (c >= 0x30 && c <= 0x39)) i = skipNumber(line, i, n);
      else if (matches(line, i, literalTrue)) i += 4;
      else if (matches(line, i, literalFalse)) i += 5;
      else if (matches(line, i, literalNull)) i += 4;
      else return undefined;
      if (i < 0 || !scan.valueEnds(place, member, start, i)) return undefined;
      i = skipSpace(line, i, n);
    }
    // After a value: a `,` and the next element or member, or closers (each a value that ends).
    for (;;) {
      const isObject = objects[objects.length - 1] as boolean;
      const d = line[i];
      if (d === comma) {
        i = skipSpace(line, i + 1, n);
        if (isObject) {
          const read = readMember(line, i, n);
          if (read === undefined) return undefined;
          i = read.next;
          place = places[places.length - 1] as number;
          member = read.key;
        } else {
          place = elsewhere;
          member = undefined;
        }
        break;
      }
      if (d !== (isObject ? closeBrace : closeBracket)) return undefined;
      objects.pop();
      places.pop();
      const closedStart = starts.pop() as number;
      const closedMember = members.pop();
      i += 1;
      if (objects.length === 0) {
        end = i;
        break;
      }
      if (!scan.valueEnds(places[places.length - 1] as number, closedMember, closedStart, i)) return undefined;
      i = skipSpace(line, i, n);
    }
  }
  if (skipSpace(line, end, n) !== n) return undefined;
  return scan.answer(end);
}

/** What a scan found so far of the members that matter, and the checks on them. */
class AnswerScan {
  readonly #line: Buffer;
  #jsonrpc = false;
  #result = false;
  #idSpan: ByteSpan | undefined;
  #meta = false;
  #isErrorSeen = false;
  #isError = false;
  #sessionSeen = false;
  #session: ByteSpan | undefined;

  public constructor(line: Buffer) {
    this.#line = line;
  }

  /** A value whose first byte is `c` starts as `member` of an object at `place`: `false` when the line cannot be a plain answer. */
  public valueStarts(place: number, member: Uint8Array | undefined, c: number): boolean {
    if (member === undefined || place === elsewhere) return true;
    // A member name with escapes may spell any name: only where names do not matter.
    if (member === escapedKey) return false;
    if (place === topLevel) {
      if (member === keyMethod || member === keyError) return false;
      if (member === keyResult) {
        if (this.#result || c !== openBrace) return false;
        this.#result = true;
      } else if (member === keyId) {
        if (this.#idSpan !== undefined || (c !== minus && (c < 0x30 || c > 0x39))) return false;
      } else if (member === keyJsonrpc) {
        if (this.#jsonrpc || c !== quote) return false;
      }
    } else if (place === inResult) {
      if (member === keyMeta) {
        if (this.#meta) return false;
        this.#meta = true;
      } else if (member === keyIsError) {
        if (this.#isErrorSeen) return false;
        this.#isErrorSeen = true;
      }
    } else if (place === inResultMeta && member === keySession) {
      if (this.#sessionSeen) return false;
      this.#sessionSeen = true;
    }
    return true;
  }

  /** The value of `member` of an object at `place` spans `start` to `end`. */
  public valueEnds(place: number, member: Uint8Array | undefined, start: number, end: number): boolean {
    if (member === undefined || place === elsewhere) return true;
    if (place === topLevel) {
      if (member === keyJsonrpc) {
        if (!sameBytes(this.#line, start, end, jsonrpcVersion)) return false;
        this.#jsonrpc = true;
      } else if (member === keyId) this.#idSpan = { start, end };
    } else if (place === inResult && member === keyIsError) {
      this.#isError = sameBytes(this.#line, start, end, literalTrue);
    } else if (place === inResultMeta && member === keySession) this.#session = { start, end };
    return true;
  }

  /** The answer, when the message (ending at `end`) had all it needs and the line is UTF-8. */
  public answer(end: number): ScannedAnswer | undefined {
    const idSpan = this.#idSpan;
    if (!this.#jsonrpc || !this.#result || idSpan === undefined) return undefined;
    const id = Number(this.#line.toString('latin1', idSpan.start, idSpan.end));
    if (!Number.isFinite(id) || !isUtf8(this.#line)) return undefined;
    const session = this.#session;
    const sessionReport =
      session === undefined ? undefined : JSON.parse(this.#line.toString('utf8', session.start, session.end));
    return { line: this.#line, id, idSpan, end, sessionReport, isError: this.#isError };
  }
}

/** Where an object that is the value of `member` in an object at `place` sits. */
function childPlaceOf(place: number, member: Uint8Array | undefined, isObject: boolean): number {
  if (!isObject) return elsewhere;
  if (place === topLevel && member === keyResult) return inResult;
  if (place === inResult && member === keyMeta) return inResultMeta;
  return elsewhere;
}

/**
 * A member name and its `:` at `i`: the known name it is (or `undefined` for any other, or a
 * name with escapes, which can never be taken for a known one) and where its value starts.
 */
function readMember(line: Buffer, i: number, n: number): { key: Uint8Array | undefined; next: number } | undefined {
  if (line[i] !== quote) return undefined;
  const keyEnd = skipString(line, i + 1, n);
  if (keyEnd < 0) return undefined;
  const after = skipSpace(line, keyEnd, n);
  if (line[after] !== colon) return undefined;
  return { key: knownKey(line, i + 1, keyEnd - 1), next: after + 1 };
}

const knownKeys = [keyJsonrpc, keyId, keyResult, keyError, keyMethod, keyMeta, keyIsError, keySession];

function knownKey(line: Buffer, start: number, end: number): Uint8Array | undefined {
  for (const key of knownKeys) if (sameBytes(line, start, end, key)) return key;
  // An escaped name could spell a known one (`"\u0069d"` is `"id"`): such a line is not scanned.
  for (let i = start; i < end; i++) if (line[i] === backslash) return escapedKey;
  return undefined;
}

/** Stands for a member name with escapes: no member is recorded under it, and it makes the scan give up where it matters. */
const escapedKey = new Uint8Array(0);

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

/** Past a JSON number starting at `from`; -1 when it is not one. */
function skipNumber(line: Buffer, from: number, n: number): number {
  let i = from;
  if (line[i] === minus) i += 1;
  if (i >= n) return -1;
  if (line[i] === 0x30) i += 1;
  else if (isDigit(line[i])) while (isDigit(line[i])) i += 1;
  else return -1;
  if (line[i] === dot) {
    i += 1;
    if (!isDigit(line[i])) return -1;
    while (isDigit(line[i])) i += 1;
  }
  if (line[i] === 0x65 || line[i] === 0x45) {
    i += 1;
    if (line[i] === plus || line[i] === minus) i += 1;
    if (!isDigit(line[i])) return -1;
    while (isDigit(line[i])) i += 1;
  }
  return i;
}

function skipSpace(line: Buffer, from: number, n: number): number {
  let i = from;
  while (i < n) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) break;
    i += 1;
  }
  return i;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** `line` holds `bytes` at `at` (compared natively, no loop in script). */
function startsWith(line: Buffer, at: number, bytes: Uint8Array): boolean {
  return at + bytes.length <= line.length && line.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0;
}

function matches(line: Buffer, i: number, literal: Uint8Array): boolean {
  if (i + literal.length > line.length) return false;
  for (let k = 0; k < literal.length; k++) if (line[i + k] !== literal[k]) return false;
  return true;
}

function sameBytes(line: Buffer, start: number, end: number, bytes: Uint8Array): boolean {
  return end - start === bytes.length && matches(line, start, bytes);
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}
