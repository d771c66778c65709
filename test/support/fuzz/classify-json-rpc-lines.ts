import { sniffTopLevelId, sniffTrailingId } from '@nteract-mcp/foundation';
/**
 * What each line of a batch is, read the way JSON-RPC 2.0 reads it, and so what it may be answered
 * with. Ids are compared with their type: `idKey(7)` is `n:7`, `idKey("7")` is `s:7`.
 *
 * - `request`: an object with `jsonrpc: "2.0"`, a string or finite-number `id` and a string
 *   `method` (whatever else it carries) — exactly one reply with its id, unless a
 *   `notifications/cancelled` of the same batch names it (then at most one).
 * - `notification`: `jsonrpc: "2.0"`, a string `method`, no `id`, `params` absent, an object or an
 *   array, no `result`/`error` — never answered.
 * - `response`: a well-formed response (the client answering the server) — never answered.
 * - `malformed`: anything else — at most one reply, an error, with the line's id when it has a
 *   string/number one, else `null`.
 * - `lenient`: a line a tolerant reader may take for a message (a UTF-8 BOM, invalid UTF-8 bytes
 *   that a lossy decoder replaces, a line over the proxy's cap): at most one reply of any kind; a
 *   lenient `notifications/cancelled` may cancel a request sent before it (never one after it).
 */
export type LineClass = 'request' | 'notification' | 'response' | 'malformed' | 'lenient';

export interface ClassifiedLine {
  readonly cls: LineClass;
  /** Typed id key when the line has a string/number id. */
  readonly key: string | undefined;
  /** Keys named by `notifications/cancelled` (`params.requestId`). */
  readonly cancels: string | undefined;
  /** The line, shortened for reports. */
  readonly preview: string;
  /** What is unusual about a request (for grouping unanswered ones): `params array`, `id fraction`, … */
  readonly traits?: readonly string[];
}

/** A typed key for an id: `n:7` and `s:7` differ. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number' && Number.isFinite(id)) return `n:${String(id)}`;
  return undefined;
}

export function previewOf(text: string, limit = 240): string {
  const flat = JSON.stringify(text.length > limit ? `${text.slice(0, limit)}…(${text.length} chars)` : text);
  return flat.slice(1, -1);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const requestMembers: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/** What is unusual about a request, for grouping the ones left unanswered. */
function requestTraits(value: Record<string, unknown>): string[] {
  const traits: string[] = [];
  const { id, params } = value;
  if (typeof id === 'number' && !Number.isInteger(id)) traits.push('fractional id');
  else if (typeof id === 'number' && !Number.isSafeInteger(id)) traits.push('integer id beyond 2^53');
  if (Array.isArray(params)) traits.push('params is an array');
  else if (params !== undefined && !isRecord(params)) traits.push('params is not an object');
  else if (isRecord(params) && Object.hasOwn(params, '_meta') && !isRecord(params._meta))
    traits.push('params._meta is not an object');
  if (Object.keys(value).some((key) => !requestMembers.has(key))) traits.push('extra top-level member');
  return traits;
}

/** Classifies one parsed value (not an array). */
function classifyValue(value: unknown): Omit<ClassifiedLine, 'preview'> {
  if (!isRecord(value)) return { cls: 'malformed', key: undefined, cancels: undefined };
  const key = idKey(value.id);
  const hasId = Object.hasOwn(value, 'id');
  if (value.jsonrpc !== '2.0') return { cls: 'malformed', key, cancels: undefined };
  if (Object.hasOwn(value, 'method')) {
    if (typeof value.method !== 'string') return { cls: 'malformed', key, cancels: undefined };
    if (hasId && key === undefined) return { cls: 'malformed', key, cancels: undefined };
    if (hasId) return { cls: 'request', key, cancels: undefined, traits: requestTraits(value) };
    const params = value.params;
    const structured = params === undefined || isRecord(params) || Array.isArray(params);
    const plain = structured && !Object.hasOwn(value, 'result') && !Object.hasOwn(value, 'error');
    if (!plain) return { cls: 'malformed', key: undefined, cancels: undefined };
    const cancels =
      value.method === 'notifications/cancelled' && isRecord(params) ? idKey(params.requestId) : undefined;
    return { cls: 'notification', key: undefined, cancels };
  }
  const hasResult = Object.hasOwn(value, 'result');
  const hasError = Object.hasOwn(value, 'error');
  const error = value.error;
  const goodError =
    isRecord(error) &&
    Number.isInteger(error.code) &&
    typeof error.message === 'string' &&
    (key !== undefined || value.id === null);
  if (hasResult !== hasError && hasId && (hasResult ? key !== undefined : goodError)) {
    return { cls: 'response', key, cancels: undefined };
  }
  return { cls: 'malformed', key, cancels: undefined };
}

/**
 * Splits the bytes of a batch into lines and classifies each. `maxLineBytes` is the server's cap
 * on one line, when it has one (longer lines become `lenient`).
 */
export function classifyJsonRpcLines(bytes: Buffer, maxLineBytes = Number.POSITIVE_INFINITY): ClassifiedLine[] {
  const out: ClassifiedLine[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const line = bytes.subarray(start, end);
    start = end + 1;
    const lossy = line.toString('utf8');
    const preview = previewOf(lossy);
    if (lossy.trim().length === 0) continue;
    let strict: string | undefined;
    try {
      strict = strictUtf8.decode(line);
    } catch {
      strict = undefined;
    }
    const tolerant = lossy.replace(/^\uFEFF/, '');
    const oddBytes = strict === undefined || strict.startsWith('\uFEFF') || line.length > maxLineBytes;
    let value: unknown;
    let parsed = true;
    try {
      value = JSON.parse(oddBytes ? tolerant : (strict as string));
    } catch {
      parsed = false;
    }
    if (!parsed) {
      // A line over the cap is never parsed whole: the reader answers the id it can read from the
      // line's first or last bytes (foundation's sniffers, as the framer does), if any.
      const key = line.length > maxLineBytes ? sniffedKey(lossy) : undefined;
      out.push({ cls: oddBytes ? 'lenient' : 'malformed', key, cancels: undefined, preview });
      continue;
    }
    if (Array.isArray(value)) {
      // A batch: MCP removed batching; a JSON-RPC 2.0 server may still answer each member.
      out.push({ cls: 'malformed', key: undefined, cancels: undefined, preview });
      for (const member of value) {
        const key = isRecord(member) ? idKey(member.id) : undefined;
        if (key !== undefined)
          out.push({ cls: 'lenient', key, cancels: undefined, preview: `(batch member) ${preview}` });
      }
      continue;
    }
    const classified = classifyValue(value);
    // A tolerant reader acts on what it took for a message: a lenient cancellation may cancel a
    // request sent before it (the child's UTF-8 decoder drops a leading BOM).
    if (oddBytes) out.push({ cls: 'lenient', key: classified.key, cancels: classified.cancels, preview });
    else out.push({ ...classified, preview });
  }
  return out;
}

/** The key of the id a reader sniffs from an unparsable long line: its head's top-level id, else its tail's. */
function sniffedKey(text: string): string | undefined {
  const sniffBytes = 64 * 1024;
  const id = sniffTopLevelId(text.slice(0, sniffBytes)) ?? sniffTrailingId(text.slice(-sniffBytes));
  return id === null ? undefined : idKey(id);
}
