/**
 * Reading the top-level `"id"` of a JSON object that is too large to parse (or was cut): from its
 * first bytes, or from its last bytes (where `JSON.stringify` puts a key added last, as the MCP SDK
 * and our daemon do for answers). Pure.
 */

/** A JSON-RPC style id: a string or a finite number. */
export type SniffedId = string | number;

/**
 * The top-level `"id"` of a (possibly truncated) JSON object text, when it is a string or a
 * number that ends before the text does; else `null`. Nested `"id"` keys are skipped, so a
 * tool argument named `id` is never mistaken for the request id.
 */
export function sniffTopLevelId(text: string): SniffedId | null {
  let index = skipWhitespace(text, 0);
  if (text[index] !== '{') return null;
  index += 1;
  for (;;) {
    index = skipWhitespace(text, index);
    if (text[index] !== '"') return null;
    const keyEnd = endOfString(text, index);
    if (keyEnd === -1) return null;
    const key = parseJsonFragment(text.slice(index, keyEnd));
    index = skipWhitespace(text, keyEnd);
    if (text[index] !== ':') return null;
    index = skipWhitespace(text, index + 1);
    if (key === 'id') return readIdValue(text, index);
    index = endOfValue(text, index);
    if (index === -1) return null;
    index = skipWhitespace(text, index);
    if (text[index] !== ',') return null;
    index += 1;
  }
}

function readIdValue(text: string, index: number): SniffedId | null {
  if (text[index] === '"') {
    const end = endOfString(text, index);
    if (end === -1) return null;
    const value = parseJsonFragment(text.slice(index, end));
    return typeof value === 'string' ? value : null;
  }
  const match = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(index, index + 64));
  if (!match) return null;
  const after = text[index + match[0].length];
  if (after === undefined || !/[\s,}]/.test(after)) return null;
  const value = Number(match[0]);
  return Number.isFinite(value) ? value : null;
}

function parseJsonFragment(fragment: string): unknown {
  try {
    return JSON.parse(fragment);
  } catch {
    return undefined;
  }
}

function skipWhitespace(text: string, index: number): number {
  let position = index;
  while (position < text.length && /\s/.test(text[position] as string)) position += 1;
  return position;
}

/** Index just past the closing quote of the string starting at `index`, or -1 if it does not end. */
function endOfString(text: string, index: number): number {
  let position = index + 1;
  while (position < text.length) {
    const char = text[position];
    if (char === '\\') position += 2;
    else if (char === '"') return position + 1;
    else position += 1;
  }
  return -1;
}

/** Index just past the JSON value starting at `index`, or -1 if the text ends first. */
function endOfValue(text: string, index: number): number {
  const first = text[index];
  if (first === '"') return endOfString(text, index);
  if (first === '{' || first === '[') {
    let depth = 0;
    let position = index;
    while (position < text.length) {
      const char = text[position];
      if (char === '"') {
        position = endOfString(text, position);
        if (position === -1) return -1;
        continue;
      }
      if (char === '{' || char === '[') depth += 1;
      else if (char === '}' || char === ']') {
        depth -= 1;
        if (depth === 0) return position + 1;
      }
      position += 1;
    }
    return -1;
  }
  let position = index;
  while (position < text.length && !/[\s,}\]]/.test(text[position] as string)) position += 1;
  return position < text.length ? position : -1;
}

/**
 * The top-level `"id"` of a JSON object text seen only by its end: the member right before the
 * closing brace, when it is `"id"` with a string or number value (`…,"id":7}`). A nested object's
 * id (`…{"id":7}}`) or one inside a string (`…\\"id\\":7}"}`) is not taken. Else `null`.
 */
export function sniffTrailingId(text: string): SniffedId | null {
  const match = /[,{]\s*"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(text);
  if (!match) return null;
  const value = parseJsonFragment(match[1] as string);
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
